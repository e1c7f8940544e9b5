// DPoP-bound access tokens (RFC 9449) through real gateways: a real OpenID provider (oidc-provider) binds the token
// to a client key (cnf.jkt), proofs are made with jose, and a real MCP SDK client sends a fresh proof per request.
// The binding is authentication: it holds with replay protection off, where only the jti single-use check goes.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodeJwt } from "jose";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { startTestGateway, type TestGateway } from "../proxy/support/gateway.ts";
import type { Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { athOf, DpopKey } from "./support/dpop-key.ts";
import {
  AUDIENCE,
  identityProvidersYaml,
  startIdentityProviderAndUpstream,
} from "./support/gateway-identity.ts";
import type { TestIdentityProvider } from "./support/test-identity-provider.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let idp: TestIdentityProvider;
let upstream: Upstream;
/** Replay protection on (the default). */
let gateway: TestGateway;
/** security.replay_protection.enabled: false. */
let noReplay: TestGateway;
let key: DpopKey;
let otherKey: DpopKey;
/** A real token from the provider, bound to `key`. */
let bound: string;
const cleanup = cleanupsAfterAll();

function accessYaml(replayProtection: boolean): string {
  return `${identityProvidersYaml(idp)}security:
  replay_protection:
    enabled: ${replayProtection}
`;
}

beforeAll(async () => {
  ({ idp, upstream } = await startIdentityProviderAndUpstream(cleanup));
  // SVC_ALLOW_ANONYMOUS unset: with providers configured it is ignored anyway, and these tests are about tokens.
  const env = { SVC_ALLOW_ANONYMOUS: undefined };
  gateway = await startTestGateway([{ name: "up", url: upstream.url }], env, accessYaml(true));
  cleanup(() => gateway.close());
  noReplay = await startTestGateway([{ name: "up", url: upstream.url }], env, accessYaml(false));
  cleanup(() => noReplay.close());
  key = await DpopKey.generate();
  otherKey = await DpopKey.generate();
  bound = await idp.token({ resource: AUDIENCE, alg: "ES256", dpop: key });
});

const endpoint = (on: TestGateway) => `${on.url}/up/mcp`;

const initialize = (on: TestGateway, headers: Record<string, string>) =>
  postJsonRpc(endpoint(on), initializeRequest(), headers);

/** The headers of a correct DPoP request with `token`, proof by `by` (default: the key the token is bound to). */
async function dpopHeaders(on: TestGateway, token: string, by = key): Promise<Record<string, string>> {
  return {
    authorization: `DPoP ${token}`,
    dpop: await by.proof({ htm: "POST", htu: endpoint(on), accessToken: token }),
  };
}

async function expectOk(response: Promise<Response>): Promise<void> {
  const answer = await response;
  await answer.arrayBuffer();
  expect(answer.status).toBe(200);
  // The request id the client sees is the one the upstream got: what expectNotForwarded relies on.
  const requestId = answer.headers.get("x-request-id");
  expect(upstream.requests.some((request) => request.headers["x-request-id"] === requestId)).toBe(true);
}

/** The upstream never saw the request behind `answer`: no request it received carries that request's id. Not a
 *  count of everything it received, which a straggler of an earlier test (an SDK client's GET stream opening late
 *  on a loaded machine) could change. */
function expectNotForwarded(answer: Response): void {
  const requestId = answer.headers.get("x-request-id");
  expect(requestId).toBeTruthy();
  expect(upstream.requests.filter((request) => request.headers["x-request-id"] === requestId)).toEqual([]);
}

/** A 401 with a DPoP challenge carrying `error`, and nothing reached the upstream. */
async function expectRefused(
  response: Promise<Response>,
  error: "invalid_token" | "invalid_dpop_proof",
  description: RegExp,
): Promise<void> {
  const answer = await response;
  expect(answer.status).toBe(401);
  const challenge = answer.headers.get("www-authenticate") ?? "";
  expect(challenge).toMatch(new RegExp(`^DPoP realm="svc-gateway", error="${error}", `));
  expect(challenge).toMatch(/algs="[^"]*ES256[^"]*"/);
  expect(challenge).toContain('resource_metadata="');
  expect(challenge.match(/error_description="([^"]*)"/)?.[1]).toMatch(description);
  const body = (await answer.json()) as { error: { code: string } };
  expect(body.error.code).toBe("unauthorized");
  expectNotForwarded(answer);
}

describe("a DPoP-bound token (cnf.jkt), replay protection on", () => {
  test("the provider bound the token to the key: cnf.jkt is the key's RFC 7638 thumbprint", () => {
    expect(decodeJwt(bound).cnf).toEqual({ jkt: key.thumbprint });
  });

  test("with the DPoP scheme and a proof by that key for this request and this token → 200", async () => {
    await expectOk(initialize(gateway, await dpopHeaders(gateway, bound)));
  });

  test("a real MCP SDK client sending a fresh proof with every request works end to end", async () => {
    const proofPerRequest = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `DPoP ${bound}`);
      const htm = init?.method ?? "GET";
      headers.set("dpop", await key.proof({ htm, htu: String(url), accessToken: bound }));
      return fetch(url, { ...init, headers });
    };
    const client = new Client({ name: "dpop-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint(gateway)), { fetch: proofPerRequest }),
    );
    const echo = await client.callTool({ name: "echo", arguments: { text: "bound" } });
    expect(echo.content).toEqual([{ type: "text", text: "bound" }]);
    await client.close();
  });

  test("no proof → 401 invalid_dpop_proof", async () => {
    await expectRefused(
      initialize(gateway, { authorization: `DPoP ${bound}` }),
      "invalid_dpop_proof",
      /no DPoP proof/,
    );
  });

  test("a proof by another key (even naming this token) → 401 invalid_token: the key binding fails", async () => {
    // The token is in the verifier's cache by now: the binding must still be checked on this request.
    await expectRefused(
      initialize(gateway, await dpopHeaders(gateway, bound, otherKey)),
      "invalid_token",
      /Invalid DPoP key binding/,
    );
  });

  test("a proof by the right key whose ath names another token, or no token → 401 invalid_dpop_proof", async () => {
    const other = await idp.token({ resource: AUDIENCE, dpop: key });
    const forOther = await key.proof({ htm: "POST", htu: endpoint(gateway), accessToken: other });
    await expectRefused(
      initialize(gateway, { authorization: `DPoP ${bound}`, dpop: forOther }),
      "invalid_dpop_proof",
      /ath is not the hash of this access token/,
    );
    const noAth = await key.proof({ htm: "POST", htu: endpoint(gateway) });
    await expectRefused(
      initialize(gateway, { authorization: `DPoP ${bound}`, dpop: noAth }),
      "invalid_dpop_proof",
      /no ath/,
    );
  });

  test("a proof for another URL or another method → 401 invalid_dpop_proof", async () => {
    const elsewhere = await key.proof({ htm: "POST", htu: `${gateway.url}/other/mcp`, accessToken: bound });
    await expectRefused(
      initialize(gateway, { authorization: `DPoP ${bound}`, dpop: elsewhere }),
      "invalid_dpop_proof",
      /htu does not match/,
    );
    const get = await key.proof({ htm: "GET", htu: endpoint(gateway), accessToken: bound });
    await expectRefused(
      initialize(gateway, { authorization: `DPoP ${bound}`, dpop: get }),
      "invalid_dpop_proof",
      /htm is GET/,
    );
  });

  test("sent with the Bearer scheme, even with a valid proof → 401 invalid_token (DPoP cannot be dropped)", async () => {
    const { dpop } = await dpopHeaders(gateway, bound);
    await expectRefused(
      initialize(gateway, { authorization: `Bearer ${bound}`, dpop: dpop ?? "" }),
      "invalid_token",
      /DPoP-bound; send it as Authorization: DPoP/,
    );
    await expectRefused(
      initialize(gateway, { authorization: `Bearer ${bound}` }),
      "invalid_token",
      /DPoP-bound/,
    );
  });

  test("the same proof twice → 409 replayed (replay protection spends the jti)", async () => {
    const headers = await dpopHeaders(gateway, bound);
    await expectOk(initialize(gateway, headers));
    const again = await initialize(gateway, headers);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("replayed");
  });

  test("a token bound some other way (cnf without jkt, e.g. a TLS certificate) → 401: a binding never ignored", async () => {
    const mtls = await idp.sign({
      aud: AUDIENCE,
      cnf: { "x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2" },
    });
    const answer = await initialize(gateway, { authorization: `Bearer ${mtls}` });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toMatch(
      /^Bearer .*error="invalid_token".*cnf \(x5t#S256\)/,
    );
    await answer.arrayBuffer();
    expectNotForwarded(answer);
    const both = await idp.sign({ aud: AUDIENCE, cnf: { jkt: key.thumbprint, "x5t#S256": "abc" } });
    const answer2 = await initialize(gateway, await dpopHeaders(gateway, both));
    expect(answer2.status).toBe(401);
    await answer2.arrayBuffer();
    expectNotForwarded(answer2);
  });
});

describe("a token that is not bound (no cnf)", () => {
  test("with the DPoP scheme → 401 invalid_token: the scheme claims a binding the token does not have", async () => {
    const plain = await idp.token({ resource: AUDIENCE });
    await expectRefused(
      initialize(gateway, await dpopHeaders(gateway, plain)),
      "invalid_token",
      /not DPoP-bound \(no cnf.jkt\); send it as Authorization: Bearer/,
    );
  });

  test("as Bearer next to a proof naming another token → 200: the proof is only replay-checked", async () => {
    const plain = await idp.token({ resource: AUDIENCE });
    const proof = await key.proof({
      htm: "POST",
      htu: endpoint(gateway),
      claims: { ath: athOf("another token") },
    });
    await expectOk(initialize(gateway, { authorization: `Bearer ${plain}`, dpop: proof }));
    const replayed = await initialize(gateway, { authorization: `Bearer ${plain}`, dpop: proof });
    expect(replayed.status).toBe(409);
    await replayed.arrayBuffer();
  });
});

describe("replay protection off: the binding still holds, only the jti check goes", () => {
  test("a matching proof → 200, and the very same proof again → 200 (no jti check)", async () => {
    const headers = await dpopHeaders(noReplay, bound);
    await expectOk(initialize(noReplay, headers));
    await expectOk(initialize(noReplay, headers));
  });

  test("no proof, another key's proof, a wrong ath, or the Bearer scheme → 401", async () => {
    await expectRefused(
      initialize(noReplay, { authorization: `DPoP ${bound}` }),
      "invalid_dpop_proof",
      /no DPoP/,
    );
    await expectRefused(
      initialize(noReplay, await dpopHeaders(noReplay, bound, otherKey)),
      "invalid_token",
      /key binding/,
    );
    const wrongAth = await key.proof({ htm: "POST", htu: endpoint(noReplay), accessToken: "another token" });
    await expectRefused(
      initialize(noReplay, { authorization: `DPoP ${bound}`, dpop: wrongAth }),
      "invalid_dpop_proof",
      /ath/,
    );
    await expectRefused(
      initialize(noReplay, { authorization: `Bearer ${bound}` }),
      "invalid_token",
      /DPoP-bound/,
    );
  });

  test("a plain bearer token next to an invalid proof → 200: without replay protection the proof is not read", async () => {
    const plain = await idp.token({ resource: AUDIENCE });
    await expectOk(initialize(noReplay, { authorization: `Bearer ${plain}`, dpop: "not-a-proof" }));
  });
});
