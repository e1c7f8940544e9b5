// Two gateway processes sharing one Redis, as replicas behind one public URL: a client registers at one, the user
// logs in through the other, the code is redeemed and the tools called at the first, the refresh token rotated at the
// second. Only Redis and the keys from the environment (the same Secret) are shared.
import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.ts";
import { RedisServer } from "../kv/redis-server.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { oauthGatewayConfig } from "./support/oauth-gateway.ts";
import { authorizationCode, exchange, refresh, registerPublicClient } from "./support/oauth-requests.ts";

const BIN = fileURLToPath(new URL("../../bin/svc-gateway.js", import.meta.url));

let redis: RedisServer;
let idp: CompanyIdp;
let upstream: Upstream;
let dir: string;
const children: ChildProcess[] = [];
let replicaA: string;
let replicaB: string;

/** Starts `svc-gateway start` on `port`; resolves once its log says it is listening. */
async function startReplica(port: number, configPath: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [BIN, "start", "--config", configPath, "--port", String(port)], {
    env: {
      ...process.env,
      LOG_LEVEL: "info",
      SVC_CONFIG_POLL_SECONDS: "0",
      SVC_AUDIT_FILE: "/dev/null",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`gateway on ${port} exited with ${code}`)));
    lines.on("line", (line) => {
      if (line.includes('"msg":"listening"')) resolve();
    });
  });
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  redis = await RedisServer.start();
  const [portA, portB] = [await freePort(), await freePort()];
  // One public URL for both, as behind a load balancer: it is the issuer and the resources' origin.
  const publicUrl = `http://127.0.0.1:${portA}`;
  idp = await startCompanyIdp({ gatewayUrl: publicUrl, groups: { alice: ["staff"] } });
  upstream = await startUpstream({ stateful: true });
  dir = await mkdtemp(join(tmpdir(), "svc-gw-replicas-"));
  const configPath = join(dir, "config.yaml");
  await writeFile(
    configPath,
    oauthGatewayConfig({ port: portA, idpIssuer: idp.issuer, upstreamUrl: upstream.url }),
  );
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const env = {
    REDIS_URL: redis.url,
    SVC_PUBLIC_URL: publicUrl,
    SVC_OAUTH_SIGNING_KEYS: JSON.stringify({
      keys: [{ ...privateKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" }],
    }),
    SVC_OAUTH_KV_KEY: randomBytes(32).toString("base64"),
  };
  [replicaA, replicaB] = await Promise.all([
    startReplica(portA, configPath, env),
    startReplica(portB, configPath, env),
  ]);
}, 60_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await upstream?.close();
  await idp?.close();
  await redis?.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

it("serves at one replica a client registered and logged in through the other", async () => {
  const resource = `${replicaA}/tools/mcp`;
  const clientId = await registerPublicClient(replicaB);
  // The browser goes through replica A (the public URL): authorization, login at the IdP, consent.
  const { code, verifier } = await authorizationCode(replicaA, clientId, resource);
  const issued = await exchange(replicaB, clientId, code, verifier, resource);
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);

  const { client } = await connectClient(`${replicaB}/tools/mcp`, {
    headers: { authorization: `Bearer ${issued.body.access_token}` },
  });
  const result = await client.callTool({ name: "echo", arguments: { text: "replica" } });
  expect(JSON.stringify(result.content)).toContain("replica");
  await client.close();

  const rotated = await refresh(replicaA, clientId, issued.body.refresh_token as string);
  expect(rotated.status).toBe(200);
  // The rotation is seen by the other replica: the old refresh token is reuse there, and revokes the family.
  const reused = await refresh(replicaB, clientId, issued.body.refresh_token as string);
  expect(reused.body.error).toBe("invalid_grant");
  const afterReuse = await refresh(replicaA, clientId, rotated.body.refresh_token as string);
  expect(afterReuse.body.error).toBe("invalid_grant");

  // At rest in Redis: neither the user, nor the client, nor any token appears in a key or a value.
  const redisClient = new Redis(redis.url);
  const keys = await redisClient.keys("*");
  const dump = [
    ...keys,
    ...(await Promise.all(keys.map((key) => redisClient.get(key).catch(() => "")))),
  ].join("\n");
  await redisClient.quit();
  expect(keys.length).toBeGreaterThan(0);
  for (const secret of [clientId, "alice", "staff", issued.body.refresh_token as string, code]) {
    expect(dump.split("\n").filter((line) => line.includes(secret))).toEqual([]);
  }
}, 60_000);
