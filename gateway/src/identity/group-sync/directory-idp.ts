// Group sync for `directory_idp` through Microsoft Graph: a client-credentials token from
// `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token` for the scope `https://graph.microsoft.com/.default`,
// then `GET /v1.0/users/{oid}/transitiveMemberOf?$select=id,displayName&$top=999`, following `@odata.nextLink`.
// Microsoft's national clouds have their own login and Graph hosts: both follow the issuer's login host (a US
// Government tenant's issuer is on login.microsoftonline.us, so its Graph is graph.microsoft.us), and
// `management_url` / `management_token_url` set them outright (DoD's dod-graph.microsoft.us, an egress proxy, a
// stand-in). The token's scope names the cloud's Graph, whatever URL it is reached at.
// Groups are the group object ids, as Entra puts them in a token's `groups` claim, so a policy written for token
// groups means the same with sync (display names are not unique and anyone allowed to create a group picks one).
// Directory roles and administrative units in the answer are skipped. A token whose groups did not fit (the overage
// claim `_claim_names.groups`) carries none: sync is how its groups are found.
import type { IdentityProviderConfig } from "../../config/index.ts";
import { addBounded, type GroupSource, MAX_PAGES, type SyncSubject } from "./group-source.ts";
import { ManagementToken } from "./management-token.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const GRAPH = "https://graph.microsoft.com";
const LOGIN = "https://login.microsoftonline.com";
/** Microsoft's login hosts and the Graph of their cloud (learn.microsoft.com, "National cloud deployments"). */
const GRAPH_OF_LOGIN: Record<string, string> = {
  "login.microsoftonline.com": GRAPH,
  "login.microsoftonline.us": "https://graph.microsoft.us",
  "login.partner.microsoftonline.cn": "https://microsoftgraph.chinacloudapi.cn",
  "login.chinacloudapi.cn": "https://microsoftgraph.chinacloudapi.cn",
};
const GRAPHS = new Set([...Object.values(GRAPH_OF_LOGIN), "https://dod-graph.microsoft.us"]);

export interface DirectoryEndpoints {
  /** Graph's base URL, where requests go. */
  graph: string;
  /** The token endpoint of the tenant. */
  tokenUrl: string;
  /** The Graph the token is for (its `.default` scope): the cloud's, wherever requests go. */
  graphResource: string;
}

export function directoryEndpoints(provider: IdentityProviderConfig): DirectoryEndpoints {
  const issuerHost = new URL(provider.issuer).host;
  const cloudGraph = GRAPH_OF_LOGIN[issuerHost];
  const login = cloudGraph === undefined ? LOGIN : `https://${issuerHost}`;
  const graph = (provider.management_url ?? cloudGraph ?? GRAPH).replace(/\/$/, "");
  const configured =
    provider.management_url === undefined ? undefined : new URL(provider.management_url).origin;
  return {
    graph,
    tokenUrl:
      provider.management_token_url ??
      `${login}/${encodeURIComponent(provider.tenant_id as string)}/oauth2/v2.0/token`,
    graphResource: configured !== undefined && GRAPHS.has(configured) ? configured : (cloudGraph ?? GRAPH),
  };
}

export function directoryIdpSource(provider: IdentityProviderConfig): GroupSource {
  const { graph, tokenUrl, graphResource } = directoryEndpoints(provider);
  const timeoutMs = provider.timeout * 1000;
  const token = new ManagementToken({
    tokenUrl,
    encoding: "form",
    params: {
      client_id: provider.client_id as string,
      client_secret: provider.client_secret as string,
      scope: `${graphResource}/.default`,
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
