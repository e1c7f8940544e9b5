import type { RequestContext } from "@svc-mcp/framework";

/** The authenticated caller, as established by auth.ts. */
export interface Caller {
  subject: string;
  clientId: string;
  scopes: string[];
}

export class ForbiddenError extends Error {}

/** The caller of this request; with `scope`, refuses callers whose token lacks it. */
export function caller(context: RequestContext, scope?: string): Caller {
  const info = context.authInfo;
  // auth.ts guarantees a validated token; reaching here without one means auth.ts was removed.
  if (!info) throw new ForbiddenError("this server requires authentication; auth.ts is missing");
  if (scope && !info.scopes.includes(scope)) {
    throw new ForbiddenError(`your token lacks the scope ${scope}`);
  }
  const subject = typeof info.extra?.sub === "string" ? info.extra.sub : info.clientId;
  return { subject, clientId: info.clientId, scopes: info.scopes };
}
