// Group sync against loopback fakes of each provider's management API (their documented wire formats), over real
// HTTP, with the real memory KV store. The clock is real time plus an offset the test moves forward, so TTLs pass at
// once while a provider's Retry-After (set from the real clock) is still honoured.
import { afterAll, beforeEach, describe, expect, test } from "vitest";
import type { IdentityProviderConfig } from "../../src/config/index.ts";
import { directoryEndpoints } from "../../src/identity/group-sync/directory-idp.ts";
import { type FallbackSource, GroupSync } from "../../src/identity/group-sync/group-sync.ts";
import { projectApiBase } from "../../src/identity/group-sync/project-idp.ts";
import type { Principal } from "../../src/identity/principal.ts";
import { MemoryKvStore } from "../../src/kv/index.ts";
import { createLogger } from "../../src/log/logger.ts";
import {
  type DirectoryIdpFake,
  graphThrottled,
  startDirectoryIdpFake,
} from "./support/management-fakes/directory-idp-fake.ts";
import { bearerOf, startFakeApi } from "./support/management-fakes/fake-api.ts";
import {
  type HostedIdpFake,
  hostedRateLimited,
  startHostedIdpFake,
} from "./support/management-fakes/hosted-idp-fake.ts";
import {
  descopeRateLimited,
  type ProjectIdpFake,
  startProjectIdpFake,
} from "./support/management-fakes/project-idp-fake.ts";

const TTL_MS = 60_000;
const MAX_STALE_MS = 10 * 60_000;

let offset = 0;
const now = () => Date.now() + offset;
let fallbacks: [string, FallbackSource][] = [];
let logLines: string[] = [];

function newGroupSync(): GroupSync {
  return new GroupSync({
    kv: new MemoryKvStore({ now }),
    logger: createLogger({ level: "info", write: (line) => logLines.push(line) }),
    ttlMs: TTL_MS,
    maxStaleMs: MAX_STALE_MS,
    now,
    onFallback: (provider, source) => fallbacks.push([provider, source]),
  });
}

function principal(idp: string, sub: string, groups: string[] = [], oid?: string): Principal {
  return {
    sub,
    idp,
    groups,
    scopes: [],
    expiresAt: Math.floor(Date.now() / 1000) + 300,
    ...(oid ? { oid } : {}),
  };
}

const fakes: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
});

beforeEach(() => {
  offset = 0;
  fallbacks = [];
  logLines = [];
});

describe("hosted_idp (Auth0-style Management API)", () => {
  const issuer = "https://tenant.example-idp.test/";
  let fake: HostedIdpFake;
  let provider: IdentityProviderConfig;

  beforeEach(async () => {
    fake = await startHostedIdpFake(issuer);
    fakes.push(fake);
    provider = {
      name: "corp",
      type: "hosted_idp",
      issuer,
      jwks_uri: `${issuer}.well-known/jwks.json`,
      api_identifiers: [],
      timeout: 2,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      // Reached as a deployment reaches it: through the provider's configuration.
      management_url: fake.url,
    } as IdentityProviderConfig;
  });

  test("roles over several pages and organizations, added to the token's groups", async () => {
    const roles = Array.from({ length: 150 }, (_, i) => `role-${i}`);
    fake.users.set("auth0|alice", { roles, organizations: ["acme"] });
    const sync = newGroupSync();
    const groups = await sync.groupsFor(provider, principal("corp", "auth0|alice", ["from-token"]));
    expect(new Set(groups)).toEqual(new Set(["from-token", ...roles, "org:acme"]));
    expect(fake.calls.get("roles")).toBe(2); // per_page 100: two pages
    expect(fake.calls.get("token")).toBe(1);
    // Cached: no second lookup within the TTL.
    await sync.groupsFor(provider, principal("corp", "auth0|alice"));
    expect(fake.calls.get("roles")).toBe(2);
  });

  test("a 429 with X-RateLimit-Reset: fallback to the token's groups, no call before the reset, then sync again", async () => {
    fake.users.set("auth0|bob", { roles: ["admins"], organizations: [] });
    const sync = newGroupSync();
    fake.answerNextOnce(hostedRateLimited(30));
    expect(await sync.groupsFor(provider, principal("corp", "auth0|bob", ["t"]))).toEqual(["t"]);
    expect(fallbacks).toEqual([["corp", "token"]]);
    expect(sync.status().corp).toMatchObject({ state: "rate_limited", fallbacks: 1 });
    expect(sync.degraded()).toBe(true);
    const calls = fake.calls.get("roles");
    expect(await sync.groupsFor(provider, principal("corp", "auth0|bob", ["t"]))).toEqual(["t"]);
    expect(fake.calls.get("roles")).toBe(calls); // the provider asked for quiet: it gets it
    offset += 31_000;
    expect(await sync.groupsFor(provider, principal("corp", "auth0|bob", ["t"]))).toEqual(["t", "admins"]);
    expect(sync.status().corp).toMatchObject({ state: "ok" });
    expect(sync.degraded()).toBe(false);
  });
});

describe("directory_idp (Microsoft Graph transitiveMemberOf)", () => {
  let fake: DirectoryIdpFake;
  let provider: IdentityProviderConfig;

  beforeEach(async () => {
    fake = await startDirectoryIdpFake();
    fakes.push(fake);
    provider = {
      name: "entra",
      type: "directory_idp",
      issuer: `https://login.example.test/${fake.tenant}/v2.0`,
      jwks_uri: "https://login.example.test/keys",
      api_identifiers: [],
      timeout: 2,
      tenant_id: fake.tenant,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      management_url: fake.url,
      management_token_url: `${fake.url}/${fake.tenant}/oauth2/v2.0/token`,
    } as IdentityProviderConfig;
  });

  test("pages through @odata.nextLink, keeps group ids, skips directory roles, looks the user up by oid", async () => {
    fake.users.set("oid-1", ["g1", "g2", "g3", "g4", "g5"]);
    const sync = newGroupSync();
    const groups = await sync.groupsFor(provider, principal("entra", "pairwise-sub", [], "oid-1"));
    expect(groups.sort()).toEqual(["g1", "g2", "g3", "g4", "g5"]);
    expect(fake.calls.get("transitiveMemberOf")).toBe(3); // 6 objects, 2 a page
  });

  test("a token without oid cannot be looked up: the token's groups, counted", async () => {
    const sync = newGroupSync();
    expect(await sync.groupsFor(provider, principal("entra", "sub", ["t"]))).toEqual(["t"]);
    expect(fallbacks).toEqual([["entra", "token"]]);
    expect(sync.status().entra?.lastError).toMatch(/no "oid" claim/);
  });

  test("a group change at the provider applies after the TTL, without restart; background refresh near the end", async () => {
    fake.users.set("oid-2", ["old"]);
    const sync = newGroupSync();
    const p = principal("entra", "s", [], "oid-2");
    expect(await sync.groupsFor(provider, p)).toEqual(["old"]);
    fake.users.set("oid-2", ["new"]);
    offset += TTL_MS * 0.5;
    expect(await sync.groupsFor(provider, p)).toEqual(["old"]);
    offset += TTL_MS * 0.51; // past the TTL
    expect(await sync.groupsFor(provider, p)).toEqual(["new"]);
    // Refresh ahead: at 90 % of the TTL the cached answer is served and a lookup runs in the background.
    fake.users.set("oid-2", ["newer"]);
    const before = fake.calls.get("transitiveMemberOf") ?? 0;
    offset += TTL_MS * 0.9;
    expect(await sync.groupsFor(provider, p)).toEqual(["new"]);
    await expect.poll(() => fake.calls.get("transitiveMemberOf")).toBe(before + 1);
    await expect.poll(() => sync.groupsFor(provider, p)).toEqual(["newer"]);
  });

  test("an outage serves the cached groups up to the stale limit, then only the token's; 429 Retry-After honoured", async () => {
    fake.users.set("oid-3", ["g"]);
    const sync = newGroupSync();
    const p = principal("entra", "s", ["t"], "oid-3");
    expect(await sync.groupsFor(provider, p)).toEqual(["t", "g"]);
    fake.down = true;
    offset += TTL_MS + 1;
    expect(await sync.groupsFor(provider, p)).toEqual(["t", "g"]);
    expect(fallbacks).toEqual([["entra", "cache"]]);
    expect(sync.status().entra).toMatchObject({ state: "failing", fallbacks: 1 });
    expect(sync.status().entra?.lastError).toMatch(/HTTP 503/);
    offset += MAX_STALE_MS;
    expect(await sync.groupsFor(provider, p)).toEqual(["t"]);
    expect(fallbacks.at(-1)).toEqual(["entra", "token"]);
    expect(logLines.filter((line) => line.includes("group sync failed"))).toHaveLength(1); // not once per request
    fake.down = false;
    fake.answerNextOnce(graphThrottled(5));
    expect(await sync.groupsFor(provider, p)).toEqual(["t"]);
    expect(sync.status().entra?.state).toBe("rate_limited");
    offset += 6_000;
    expect(await sync.groupsFor(provider, p)).toEqual(["t", "g"]);
  });

  test("a nextLink to another host is refused: the management token never leaves Graph", async () => {
    fake.users.set("oid-4", ["a", "b", "c"]);
    const sync = newGroupSync();
    fake.answerNextOnce({
      status: 200,
      json: { value: [], "@odata.nextLink": "https://attacker.example/v1.0/steal" },
    });
    expect(await sync.groupsFor(provider, principal("entra", "s", [], "oid-4"))).toEqual([]);
    expect(sync.status().entra?.lastError).toMatch(/nextLink does not point at/);
  });
});

describe("project_idp (Descope-style management API)", () => {
  let fake: ProjectIdpFake;
  let provider: IdentityProviderConfig;

  beforeEach(async () => {
    fake = await startProjectIdpFake();
    fakes.push(fake);
    provider = {
      name: "proj",
      type: "project_idp",
      issuer: `https://api.descope.com/${fake.projectId}`,
      jwks_uri: `https://api.descope.com/${fake.projectId}/.well-known/jwks.json`,
      api_identifiers: [],
      timeout: 2,
      project_id: fake.projectId,
      management_key: fake.managementKey,
      management_url: fake.url,
    } as IdentityProviderConfig;
  });

  test("project roles, tenants and tenant roles, each kept apart", async () => {
    fake.users.set("U1", { roleNames: ["viewer"], tenants: [{ tenantId: "T1", roleNames: ["admin"] }] });
    const sync = newGroupSync();
    expect(await sync.groupsFor(provider, principal("proj", "U1"))).toEqual([
      "viewer",
      "tenant:T1",
      "tenant:T1:admin",
    ]);
  });

  test("429 with Retry-After and a wrong management key both fall back to the token's groups", async () => {
    fake.users.set("U2", { roleNames: ["viewer"], tenants: [] });
    const sync = newGroupSync();
    fake.answerNextOnce(descopeRateLimited(2));
    expect(await sync.groupsFor(provider, principal("proj", "U2", ["t"]))).toEqual(["t"]);
    expect(sync.status().proj?.state).toBe("rate_limited");
    const wrongKey = { ...provider, management_key: "wrong" };
    offset += 3_000;
    expect(await sync.groupsFor(wrongKey, principal("proj", "U2", ["t"]))).toEqual(["t"]);
    expect(sync.status().proj?.lastError).toMatch(/HTTP 401: Unauthorized/);
    expect(sync.status().proj?.lastError).not.toContain("wrong");
  });
});

test("a provider without management credentials (empty = not configured) keeps the token's groups, no lookup", async () => {
  const sync = newGroupSync();
  const provider = {
    name: "p",
    type: "hosted_idp",
    client_id: "",
    client_secret: "",
  } as IdentityProviderConfig;
  const p = principal("p", "s", ["t"]);
  expect(await sync.groupsFor(provider, p)).toBe(p.groups);
  expect(sync.status()).toEqual({});
});

describe("userinfo_endpoint", () => {
  test("asked with the caller's token only when it carries no groups; cached per token; another sub is refused", async () => {
    const answers = new Map<string, Record<string, unknown>>([
      ["token-a", { sub: "alice", groups: ["from-userinfo"], "https://acme.example/roles": ["editor"] }],
      ["token-b", { sub: "mallory", groups: ["admins"] }],
    ]);
    const userinfo = await startFakeApi((request) => {
      const claims = answers.get(bearerOf(request) ?? "");
      return {
        route: "userinfo",
        answer:
          claims === undefined
            ? { status: 401, json: { error: "invalid_token" } }
            : { status: 200, json: claims },
      };
    });
    fakes.push(userinfo);
    const provider = {
      name: "oidc",
      type: "hosted_idp",
      userinfo_endpoint: `${userinfo.url}/userinfo`,
      timeout: 2,
    } as IdentityProviderConfig;
    const sync = newGroupSync();
    expect((await sync.groupsFor(provider, principal("oidc", "alice"), "token-a")).sort()).toEqual([
      "editor",
      "from-userinfo",
    ]);
    await sync.groupsFor(provider, principal("oidc", "alice"), "token-a");
    expect(userinfo.calls.get("userinfo")).toBe(1);
    // The token has groups: userinfo is not asked.
    expect(await sync.groupsFor(provider, principal("oidc", "alice", ["t"]), "token-c")).toEqual(["t"]);
    // A DPoP-bound token: the gateway cannot sign the proof userinfo would need, so it is not sent.
    const bound = { ...principal("oidc", "alice"), dpopJkt: "thumbprint" };
    expect(await sync.groupsFor(provider, bound, "token-d")).toEqual([]);
    expect(userinfo.calls.get("userinfo")).toBe(1);
    // An answer about somebody else grants nothing.
    expect(await sync.groupsFor(provider, principal("oidc", "bob"), "token-b")).toEqual([]);
    expect(sync.status().oidc?.lastError).toMatch(/"sub" is not the token's/);
    expect(fallbacks).toEqual([["oidc", "token"]]);
  });
});

describe("where each provider's management API is, without management_url", () => {
  const base = { api_identifiers: [], timeout: 2, jwks_uri: "https://idp.test/jwks" };
  test.each([
    [
      "the public cloud",
      "https://login.microsoftonline.com/t1/v2.0",
      "https://graph.microsoft.com",
      "https://login.microsoftonline.com/t1/oauth2/v2.0/token",
    ],
    [
      "US Government",
      "https://login.microsoftonline.us/t1/v2.0",
      "https://graph.microsoft.us",
      "https://login.microsoftonline.us/t1/oauth2/v2.0/token",
    ],
    [
      "China (21Vianet)",
      "https://login.partner.microsoftonline.cn/t1/v2.0",
      "https://microsoftgraph.chinacloudapi.cn",
      "https://login.partner.microsoftonline.cn/t1/oauth2/v2.0/token",
    ],
    [
      "a B2C or custom issuer",
      "https://sso.acme.example/t1/v2.0",
      "https://graph.microsoft.com",
      "https://login.microsoftonline.com/t1/oauth2/v2.0/token",
    ],
  ])(
    "directory_idp in %s: Graph and token endpoint follow the issuer's login host",
    (_cloud, issuer, graph, tokenUrl) => {
      const provider = {
        ...base,
        name: "e",
        type: "directory_idp",
        issuer,
        tenant_id: "t1",
      } as IdentityProviderConfig;
      expect(directoryEndpoints(provider)).toEqual({ graph, tokenUrl, graphResource: graph });
    },
  );

  test("directory_idp with management_url: requests go there, the token stays for the cloud's Graph (DoD's own host counts)", () => {
    const issuer = "https://login.microsoftonline.us/t1/v2.0";
    const provider = {
      ...base,
      name: "e",
      type: "directory_idp",
      issuer,
      tenant_id: "t1",
    } as IdentityProviderConfig;
    const proxied = directoryEndpoints({ ...provider, management_url: "http://graph-egress.internal:8080" });
    expect(proxied.graph).toBe("http://graph-egress.internal:8080");
    expect(proxied.graphResource).toBe("https://graph.microsoft.us");
    expect(
      directoryEndpoints({ ...provider, management_url: "https://dod-graph.microsoft.us" }).graphResource,
    ).toBe("https://dod-graph.microsoft.us");
  });

  test.each([
    ["the derived issuer", "https://api.descope.com/v1/apps/P1", "https://api.descope.com"],
    ["a regional project", "https://api.euc1.descope.com/P1", "https://api.euc1.descope.com"],
    ["a custom domain", "https://auth.acme.example/P1", "https://api.descope.com"],
  ])("project_idp with %s", (_name, issuer, api) => {
    const provider = {
      ...base,
      name: "d",
      type: "project_idp",
      issuer,
      project_id: "P1",
    } as IdentityProviderConfig;
    expect(projectApiBase(provider)).toBe(api);
    expect(projectApiBase({ ...provider, management_url: "https://api.use1.descope.com/" })).toBe(
      "https://api.use1.descope.com",
    );
  });
});
