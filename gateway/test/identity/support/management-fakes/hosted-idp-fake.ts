import { randomUUID } from "node:crypto";
import { bearerOf, type FakeAnswer, type FakeApi, startFakeApi } from "./fake-api.ts";

// An Auth0-style Management API v2 on loopback, as documented: POST /oauth/token (JSON client credentials for the
// audience https://{domain}/api/v2/), GET /api/v2/users/{id}/roles and /organizations paged with page, per_page and
// include_totals (answer { start, limit, length, total, roles | organizations }), errors as
// { statusCode, error, message, errorCode }, and 429 with X-RateLimit-Limit/-Remaining/-Reset (epoch seconds).

export interface HostedIdpFake extends FakeApi {
  users: Map<string, { roles: string[]; organizations: string[] }>;
  clientId: string;
  clientSecret: string;
  /** The audience the token request must name. */
  audience: string;
}

export async function startHostedIdpFake(domain: string): Promise<HostedIdpFake> {
  const clientId = "mgmt-client";
  const clientSecret = "mgmt-secret-0123456789";
  const audience = `${new URL(domain).origin}/api/v2/`;
  const tokens = new Set<string>();
  const users = new Map<string, { roles: string[]; organizations: string[] }>();
  const error = (statusCode: number, errorName: string, message: string, errorCode: string): FakeAnswer => ({
    status: statusCode,
    json: { statusCode, error: errorName, message, errorCode },
  });
  const api = await startFakeApi((request) => {
    if (request.method === "POST" && request.url.pathname === "/oauth/token") {
      const body = JSON.parse(request.body) as Record<string, string>;
      const ok =
        body.grant_type === "client_credentials" &&
        body.client_id === clientId &&
        body.client_secret === clientSecret &&
        body.audience === audience;
      if (!ok)
        return {
          route: "token",
          answer: { status: 401, json: { error: "access_denied", error_description: "Unauthorized" } },
        };
      const token = randomUUID();
      tokens.add(token);
      return {
        route: "token",
        answer: { status: 200, json: { access_token: token, token_type: "Bearer", expires_in: 86400 } },
      };
    }
    const match = /^\/api\/v2\/users\/([^/]+)\/(roles|organizations)$/.exec(request.url.pathname);
    if (request.method !== "GET" || match === null)
      return { route: "other", answer: error(404, "Not Found", "Not found", "not_found") };
    const kind = match[2] as "roles" | "organizations";
    const bearer = bearerOf(request);
    if (bearer === undefined || !tokens.has(bearer)) {
      return { route: kind, answer: error(401, "Unauthorized", "Invalid token", "invalid_token") };
    }
    const user = users.get(decodeURIComponent(match[1] as string));
    if (user === undefined)
      return { route: kind, answer: error(404, "Not Found", "The user does not exist.", "inexistent_user") };
    const page = Number(request.url.searchParams.get("page") ?? "0");
    const perPage = Math.min(Number(request.url.searchParams.get("per_page") ?? "50"), 100);
    const all = user[kind].map((name, i) => ({ id: `${kind}_${i}`, name }));
    const items = all.slice(page * perPage, (page + 1) * perPage);
    return {
      route: kind,
      answer: {
        status: 200,
        json:
          request.url.searchParams.get("include_totals") === "true"
            ? {
                start: page * perPage,
                limit: perPage,
                length: items.length,
                total: all.length,
                [kind]: items,
              }
            : items,
      },
    };
  });
  return Object.assign(api, { users, clientId, clientSecret, audience });
}

/** The 429 the Management API sends when a rate limit is reached. */
export function hostedRateLimited(resetInSeconds: number): FakeAnswer {
  return {
    status: 429,
    headers: {
      "x-ratelimit-limit": "10",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + resetInSeconds),
    },
    json: {
      statusCode: 429,
      error: "Too Many Requests",
      message: "Global limit has been reached",
      errorCode: "too_many_requests",
    },
  };
}
