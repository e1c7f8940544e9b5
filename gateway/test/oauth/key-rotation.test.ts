// Signing-key rotation as docs/oauth-server.md describes it, mid-rollout: one replica still signs with the old key
// but already publishes the new one (step 1), the other signs with the new key (step 2). Each accepts the other's
// tokens; a replica that never got the new key (skipping step 1) refuses them, which is why step 1 comes first.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.ts";
import { RedisServer } from "../kv/redis-server.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { MACHINE_CLIENTS_YAML, startOAuthGateway } from "./support/oauth-gateway.ts";
import { register, token } from "./support/oauth-requests.ts";

type Gateway = Awaited<ReturnType<typeof startOAuthGateway>>;

function signingKey(kid: string) {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { ...privateKey.export({ format: "jwk" }), kid, alg: "ES256", use: "sig" };
}

const OLD = signingKey("old");
const NEW = signingKey("new");
let redis: RedisServer;
let idp: CompanyIdp;
let upstream: Upstream;
const gateways: Gateway[] = [];
let stepOne: Gateway;
let stepTwo: Gateway;
let notRotated: Gateway;

beforeAll(async () => {
  redis = await RedisServer.start();
  const ports = [await freePort(), await freePort(), await freePort()] as const;
  const publicUrl = `http://127.0.0.1:${ports[0]}`;
  idp = await startCompanyIdp({ gatewayUrl: publicUrl, groups: {} });
  upstream = await startUpstream({ stateful: true });
  const kvKey = randomBytes(32).toString("base64");
  const start = async (port: number, keys: unknown[]) => {
    const gateway = await startOAuthGateway({
      port,
      idpIssuer: idp.issuer,
      upstreamUrl: upstream.url,
      oauthYaml: MACHINE_CLIENTS_YAML,
      env: {
        REDIS_URL: redis.url,
        SVC_PUBLIC_URL: publicUrl,
        SVC_OAUTH_KV_KEY: kvKey,
        SVC_OAUTH_SIGNING_KEYS: JSON.stringify({ keys }),
      },
    });
    gateways.push(gateway);
    return gateway;
  };
  stepOne = await start(ports[0], [OLD, NEW]);
  stepTwo = await start(ports[1], [NEW, OLD]);
  notRotated = await start(ports[2], [OLD]);
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await upstream?.close();
  await idp?.close();
  await redis?.kill();
});

async function machineToken(at: Gateway, client: { id: string; secret: string }): Promise<string> {
  const answer = await token(at.url, { grant_type: "client_credentials" }, client);
  expect(answer.status).toBe(200);
  return answer.body.access_token as string;
}

async function mcpStatus(at: Gateway, accessToken: string): Promise<number> {
  const response = await fetch(`${at.url}/tools/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${accessToken}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  await response.body?.cancel();
  return response.status;
}

it("keeps every token valid across replicas mid-rotation, and shows why the new key is published first", async () => {
  const { body } = await register(stepOne.url, {
    client_name: "job",
    grant_types: ["client_credentials"],
    response_types: [],
  });
  const client = { id: body.client_id as string, secret: body.client_secret as string };
  const oldSigned = await machineToken(stepOne, client);
  const newSigned = await machineToken(stepTwo, client);
  expect(decodeProtectedHeader(oldSigned).kid).toBe("old");
  expect(decodeProtectedHeader(newSigned).kid).toBe("new");

  for (const at of [stepOne, stepTwo]) {
    expect(await mcpStatus(at, oldSigned)).toBe(200);
    expect(await mcpStatus(at, newSigned)).toBe(200);
  }
  const jwks = (await (await fetch(`${stepOne.url}/oauth/jwks`)).json()) as {
    keys: Array<{ kid: string; d?: string }>;
  };
  expect(jwks.keys.map((key) => key.kid).sort()).toEqual(["new", "old"]);
  expect(jwks.keys.every((key) => key.d === undefined)).toBe(true);

  expect(await mcpStatus(notRotated, oldSigned)).toBe(200);
  expect(await mcpStatus(notRotated, newSigned)).toBe(401);
}, 60_000);
