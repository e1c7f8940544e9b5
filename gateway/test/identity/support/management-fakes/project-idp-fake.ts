import { bearerOf, type FakeAnswer, type FakeApi, startFakeApi } from "./fake-api.ts";

// A Descope-style management API on loopback, as documented: Authorization: Bearer {projectId}:{managementKey},
// GET /v1/mgmt/user/userid?userid=… answering { user: { userId, loginIds, roleNames, userTenants: [{ tenantId,
// tenantName, roleNames }] } }, errors as { errorCode, errorDescription, errorMessage }, 429 with Retry-After.

export interface ProjectIdpFake extends FakeApi {
  projectId: string;
  managementKey: string;
  users: Map<string, { roleNames: string[]; tenants: { tenantId: string; roleNames: string[] }[] }>;
}

export async function startProjectIdpFake(): Promise<ProjectIdpFake> {
  const projectId = "P2abcdefghijklmnopqrstuvwxyz";
  const managementKey = "K2-management-key-0123456789";
  const users: ProjectIdpFake["users"] = new Map();
  const error = (status: number, errorCode: string, errorDescription: string): FakeAnswer => ({
    status,
    json: { errorCode, errorDescription, errorMessage: errorDescription },
  });
  const api = await startFakeApi((request) => {
    if (request.method !== "GET" || request.url.pathname !== "/v1/mgmt/user/userid") {
      return { route: "other", answer: error(404, "E011001", "Not found") };
    }
    if (bearerOf(request) !== `${projectId}:${managementKey}`) {
      return { route: "user", answer: error(401, "E011003", "Unauthorized") };
    }
    const userId = request.url.searchParams.get("userid") ?? "";
    const user = users.get(userId);
    if (user === undefined) return { route: "user", answer: error(400, "E112102", "User not found") };
    return {
      route: "user",
      answer: {
        status: 200,
        json: {
          user: {
            userId,
            loginIds: [`${userId}@example.com`],
            status: "enabled",
            roleNames: user.roleNames,
            userTenants: user.tenants.map((t) => ({
              tenantId: t.tenantId,
              tenantName: `Tenant ${t.tenantId}`,
              roleNames: t.roleNames,
            })),
          },
        },
      },
    };
  });
  return Object.assign(api, { projectId, managementKey, users });
}

export function descopeRateLimited(retryAfterSeconds: number): FakeAnswer {
  return {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) },
    json: {
      errorCode: "E130429",
      errorDescription: "Request was throttled",
      errorMessage: "Too many requests",
    },
  };
}
