/** What a health.ts / readiness.ts `check()` may return; see README "Health and readiness". */
export type CheckResult = Response | Record<string, unknown> | boolean | undefined;

/** A JSON response with an explicit status code, for checks that choose their own status. */
export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
