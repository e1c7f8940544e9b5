// Group sync for `hosted_idp` through an Auth0-style Management API v2: a client-credentials token for the audience
// `https://{domain}/api/v2/` from `https://{domain}/oauth/token`, then the user's roles
// (`GET /api/v2/users/{id}/roles`) and organizations (`GET /api/v2/users/{id}/organizations`), both paged with
// `page`, `per_page` and `include_totals=true` (answers `{ start, limit, total, roles | organizations }`).
// Groups: each role's name, and `org:<name>` for each organization, so an organization can never be mistaken for a
// role of the same name. `management_url` / `management_token_url` move the API and its token endpoint (a tenant
// whose issuer is a custom domain, an egress proxy, a stand-in); the token's audience stays the issuer's API.
import type { IdentityProviderConfig } from "../../config/index.ts";
import { addBounded, type GroupSource, MAX_PAGES, type SyncSubject } from "./group-source.ts";
import { ManagementToken } from "./management-token.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const PER_PAGE = 100;

export function hostedIdpSource(provider: IdentityProviderConfig): GroupSource {
  const domain = new URL(provider.issuer).origin;
  const base = (provider.management_url ?? domain).replace(/\/$/, "");
  const timeoutMs = provider.timeout * 1000;
  const token = new ManagementToken({
    tokenUrl: provider.management_token_url ?? `${base}/oauth/token`,
    encoding: "json",
    params: {
      client_id: provider.client_id as string,
      client_secret: provider.client_secret as string,
      audience: `${domain}/api/v2/`,
    },
    timeoutMs,
    what: `identity provider ${provider.name}: management API token`,
  });

  async function list(userId: string, kind: "roles" | "organizations", groups: Set<string>): Promise<void> {
    const what = `identity provider ${provider.name}: user ${kind}`;
    for (let page = 0; page < MAX_PAGES; page++) {
      const url = `${base}/api/v2/users/${encodeURIComponent(userId)}/${kind}?page=${page}&per_page=${PER_PAGE}&include_totals=true`;
      let answer: Record<string, unknown>;
      try {
        answer = (await providerJson({
          method: "GET",
          url,
          headers: { authorization: `Bearer ${await token.get()}` },
          timeoutMs,
          what,
        })) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof ProviderError && error.status === 401) token.forget();
        throw error;
      }
      const items = answer[kind];
      if (!Array.isArray(items)) throw new ProviderError(`${what}: the answer has no "${kind}" list`);
      const names = items
        .map((item) => (item as { name?: unknown }).name)
        .filter((name): name is string => typeof name === "string")
        .map((name) => (kind === "roles" ? name : `org:${name}`));
      if (addBounded(groups, names)) return;
      const total = typeof answer.total === "number" ? answer.total : 0;
      if (items.length < PER_PAGE || (page + 1) * PER_PAGE >= total) return;
    }
  }

  return {
    async groupsOf(subject: SyncSubject): Promise<string[]> {
      const groups = new Set<string>();
      await list(subject.sub, "roles", groups);
      await list(subject.sub, "organizations", groups);
      return [...groups];
    },
  };
}
