// Group sync for `directory_idp` through Microsoft Graph: a client-credentials token from
// `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token` for the scope `https://graph.microsoft.com/.default`,
// then `GET /v1.0/users/{oid}/transitiveMemberOf?$select=id,displayName&$top=999`, following `@odata.nextLink`.
// Groups are the group object ids, as Entra puts them in a token's `groups` claim, so a policy written for token
// groups means the same with sync (display names are not unique and anyone allowed to create a group picks one).
// Directory roles and administrative units in the answer are skipped. A token whose groups did not fit (the overage
// claim `_claim_names.groups`) carries none: sync is how its groups are found.
import type { IdentityProviderConfig } from "../../config/index.ts";
import {
  addBounded,
  type GroupSource,
  type GroupSyncEndpoints,
  MAX_PAGES,
  type SyncSubject,
} from "./group-source.ts";
import { ManagementToken } from "./management-token.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const GRAPH = "https://graph.microsoft.com";
const LOGIN = "https://login.microsoftonline.com";

export function directoryIdpSource(
  provider: IdentityProviderConfig,
  endpoints: GroupSyncEndpoints,
): GroupSource {
  const graph = (endpoints.directoryGraphBase ?? GRAPH).replace(/\/$/, "");
  const login = (endpoints.directoryLoginBase ?? LOGIN).replace(/\/$/, "");
  const timeoutMs = provider.timeout * 1000;
  const token = new ManagementToken({
    tokenUrl: `${login}/${encodeURIComponent(provider.tenant_id as string)}/oauth2/v2.0/token`,
    encoding: "form",
    params: {
      client_id: provider.client_id as string,
      client_secret: provider.client_secret as string,
      scope: `${GRAPH}/.default`,
    },
    timeoutMs,
    what: `identity provider ${provider.name}: Graph token`,
  });
  const what = `identity provider ${provider.name}: Graph transitiveMemberOf`;

  return {
    async groupsOf(subject: SyncSubject): Promise<string[]> {
      if (subject.oid === undefined) {
        throw new ProviderError(
          `${what}: the token has no "oid" claim, so the user cannot be looked up in Graph`,
        );
      }
      const groups = new Set<string>();
      let url: string | undefined =
        `${graph}/v1.0/users/${encodeURIComponent(subject.oid)}/transitiveMemberOf?$select=id,displayName&$top=999`;
      for (let page = 0; url !== undefined && page < MAX_PAGES; page++) {
        let answer: { value?: unknown; "@odata.nextLink"?: unknown };
        try {
          answer = (await providerJson({
            method: "GET",
            url,
            headers: { authorization: `Bearer ${await token.get()}` },
            timeoutMs,
            what,
          })) as typeof answer;
        } catch (error) {
          if (error instanceof ProviderError && error.status === 401) token.forget();
          throw error;
        }
        if (!Array.isArray(answer.value)) throw new ProviderError(`${what}: the answer has no "value" list`);
        const ids = answer.value
          .filter((item) => (item as Record<string, unknown>)["@odata.type"] === "#microsoft.graph.group")
          .map((item) => (item as { id?: unknown }).id)
          .filter((id): id is string => typeof id === "string");
        if (addBounded(groups, ids)) break;
        url = nextPage(answer["@odata.nextLink"], graph, what);
      }
      return [...groups];
    },
  };
}

/** The next page, only on Graph itself: the management token must never go to a host an answer names. */
function nextPage(link: unknown, graph: string, what: string): string | undefined {
  if (link === undefined || link === null) return undefined;
  if (typeof link !== "string" || new URL(link, graph).origin !== new URL(graph).origin) {
    throw new ProviderError(`${what}: @odata.nextLink does not point at ${graph}`);
  }
  return new URL(link, graph).href;
}
