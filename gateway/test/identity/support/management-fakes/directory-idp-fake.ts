import { randomUUID } from "node:crypto";
import { bearerOf, type FakeAnswer, type FakeApi, startFakeApi } from "./fake-api.ts";

// Microsoft Entra's token endpoint and Microsoft Graph on loopback (one server plays both hosts), as documented:
// POST /{tenant}/oauth2/v2.0/token (form client credentials, scope https://graph.microsoft.com/.default),
// GET /v1.0/users/{id}/transitiveMemberOf answering { value: [directoryObject with @odata.type], @odata.nextLink }
// with a $skiptoken, errors as { error: { code, message } }, and 429 with Retry-After in seconds.

export interface DirectoryIdpFake extends FakeApi {
  tenant: string;
  clientId: string;
  clientSecret: string;
  /** Group ids per user object id; the fake also lists a directory role for everyone (sync must skip it). */
  users: Map<string, string[]>;
  /** Items per page (Graph picks its own page size; small here so paging is exercised). */
  pageSize: number;
}

export async function startDirectoryIdpFake(): Promise<DirectoryIdpFake> {
  const tenant = "11111111-2222-3333-4444-555555555555";
  const clientId = "graph-client";
  const clientSecret = "graph-secret-0123456789";
  const tokens = new Set<string>();
  const users = new Map<string, string[]>();
  const graphError = (status: number, code: string, message: string): FakeAnswer => ({
    status,
    json: { error: { code, message, innerError: { "request-id": randomUUID() } } },
  });
  const fake = { tenant, clientId, clientSecret, users, pageSize: 2 };
  const api = await startFakeApi((request) => {
    if (request.method === "POST" && request.url.pathname === `/${tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(request.body);
      const ok =
        form.get("grant_type") === "client_credentials" &&
        form.get("client_id") === clientId &&
        form.get("client_secret") === clientSecret &&
        form.get("scope") === "https://graph.microsoft.com/.default";
      if (!ok) {
        return {
          route: "token",
          answer: {
            status: 401,
            json: {
              error: "invalid_client",
              error_description: "AADSTS7000215: Invalid client secret provided.",
            },
          },
        };
      }
      const token = randomUUID();
      tokens.add(token);
      return {
        route: "token",
        answer: {
          status: 200,
          json: { token_type: "Bearer", expires_in: 3599, ext_expires_in: 3599, access_token: token },
        },
      };
    }
    const match = /^\/v1\.0\/users\/([^/]+)\/transitiveMemberOf$/.exec(request.url.pathname);
    if (request.method !== "GET" || match === null)
      return { route: "other", answer: graphError(400, "BadRequest", "Invalid request") };
    const bearer = bearerOf(request);
    if (bearer === undefined || !tokens.has(bearer)) {
      return {
        route: "transitiveMemberOf",
        answer: graphError(401, "InvalidAuthenticationToken", "Access token is empty."),
      };
    }
    const oid = decodeURIComponent(match[1] as string);
    const groups = users.get(oid);
    if (groups === undefined) {
      return {
        route: "transitiveMemberOf",
        answer: graphError(
          404,
          "Request_ResourceNotFound",
          `Resource '${oid}' does not exist or one of its queried reference-property objects are not present.`,
        ),
      };
    }
    const all = [
      {
        "@odata.type": "#microsoft.graph.directoryRole",
        id: "role-global-reader",
        displayName: "Global Reader",
      },
      ...groups.map((id) => ({ "@odata.type": "#microsoft.graph.group", id, displayName: `Group ${id}` })),
    ];
    const skip = Number(request.url.searchParams.get("$skiptoken") ?? "0");
    const value = all.slice(skip, skip + fake.pageSize);
    const json: Record<string, unknown> = {
      "@odata.context": `${api.url}/v1.0/$metadata#directoryObjects`,
      value,
    };
    if (skip + fake.pageSize < all.length) {
      const next = new URL(request.url);
      next.searchParams.set("$skiptoken", String(skip + fake.pageSize));
      json["@odata.nextLink"] = next.href;
    }
    return { route: "transitiveMemberOf", answer: { status: 200, json } };
  });
  return Object.assign(api, fake);
}

/** Graph's throttling answer. */
export function graphThrottled(retryAfterSeconds: number): FakeAnswer {
  return {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) },
    json: { error: { code: "TooManyRequests", message: "Too many requests." } },
  };
}
