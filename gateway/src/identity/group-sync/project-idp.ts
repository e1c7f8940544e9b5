// Group sync for `project_idp` through a Descope-style management API: `Authorization: Bearer
// {project_id}:{management_key}`, `GET https://api.descope.com/v1/mgmt/user/userid?userid={sub}`, which answers
// `{ user: { roleNames, userTenants: [{ tenantId, roleNames }] } }`. Groups: each project role name,
// `tenant:<tenantId>` for each tenant, and `tenant:<tenantId>:<role>` for each role inside a tenant, so a role held
// in one tenant is never read as the same role project-wide.
import type { IdentityProviderConfig } from "../../config/index.ts";
import { addBounded, type GroupSource, type GroupSyncEndpoints, type SyncSubject } from "./group-source.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const API = "https://api.descope.com";

export function projectIdpSource(
  provider: IdentityProviderConfig,
  endpoints: GroupSyncEndpoints,
): GroupSource {
  const base = (endpoints.projectApiBase ?? API).replace(/\/$/, "");
  const authorization = `Bearer ${provider.project_id}:${provider.management_key}`;
  const what = `identity provider ${provider.name}: load user`;
  return {
    async groupsOf(subject: SyncSubject): Promise<string[]> {
      const answer = (await providerJson({
        method: "GET",
        url: `${base}/v1/mgmt/user/userid?userid=${encodeURIComponent(subject.sub)}`,
        headers: { authorization },
        timeoutMs: provider.timeout * 1000,
        what,
      })) as { user?: { roleNames?: unknown; userTenants?: unknown } };
      if (typeof answer.user !== "object" || answer.user === null) {
        throw new ProviderError(`${what}: the answer has no "user"`);
      }
      const groups = new Set<string>();
      const strings = (list: unknown) =>
        Array.isArray(list) ? list.filter((s): s is string => typeof s === "string") : [];
      if (addBounded(groups, strings(answer.user.roleNames))) return [...groups];
      for (const tenant of Array.isArray(answer.user.userTenants) ? answer.user.userTenants : []) {
        const { tenantId, roleNames } = (tenant ?? {}) as { tenantId?: unknown; roleNames?: unknown };
        if (typeof tenantId !== "string" || tenantId === "") continue;
        const names = [
          `tenant:${tenantId}`,
          ...strings(roleNames).map((role) => `tenant:${tenantId}:${role}`),
        ];
        if (addBounded(groups, names)) break;
      }
      return [...groups];
    },
  };
}
