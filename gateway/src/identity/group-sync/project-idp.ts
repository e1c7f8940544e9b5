// Group sync for `project_idp` through a Descope-style management API: `Authorization: Bearer
// {project_id}:{management_key}`, `GET https://api.descope.com/v1/mgmt/user/userid?userid={sub}`, which answers
// `{ user: { roleNames, userTenants: [{ tenantId, roleNames }] } }`. Groups: each project role name,
// `tenant:<tenantId>` for each tenant, and `tenant:<tenantId>:<role>` for each role inside a tenant, so a role held
// in one tenant is never read as the same role project-wide. A project lives in one region, whose API host
// (`api.<region>.descope.com`) its issuer names; `management_url` sets it outright (a custom domain, a stand-in).
import type { IdentityProviderConfig } from "../../config/index.ts";
import { addBounded, type GroupSource, type SyncSubject } from "./group-source.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const API = "https://api.descope.com";
const REGIONAL_API = /^api(\.[a-z0-9-]+)?\.descope\.com$/;

/** The management API's base: management_url, else the issuer's own API host, else the default region's. */
export function projectApiBase(provider: IdentityProviderConfig): string {
  if (provider.management_url !== undefined) return provider.management_url.replace(/\/$/, "");
  const issuer = new URL(provider.issuer);
  return issuer.protocol === "https:" && REGIONAL_API.test(issuer.host) ? issuer.origin : API;
}

export function projectIdpSource(provider: IdentityProviderConfig): GroupSource {
  const base = projectApiBase(provider);
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
