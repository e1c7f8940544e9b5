// The "secured" bench path: a second `svc-gateway start` with the whole access layer on — JWT validation against a
// real OpenID provider's JWKS, server and capability RBAC, the per-user rate limit in a real redis-server, replay
// protection and the audit trail (stdout, into its log file). Its `bench-pii` server adds PII scrubbing with every
// recognizer on (the "scrubbed" path), and its `bench-inspected` server scrubbing plus the prompt-injection firewall in
// block mode with the built-in detector on requests and results (the "inspected" path), so the cost of each is measured
// in the same process as its baseline. Requests come from BENCH_USERS users (default 64),
// each with its own token, so the rate limit counts per user as in production and never refuses the bench.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ENTITY_TYPES } from "../src/pii/index.ts";
import { type SpawnedGateway, spawnGateway } from "../test/conformance/spawn-gateway.ts";
import { identityProvidersYaml } from "../test/identity/support/gateway-identity.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../test/identity/support/test-identity-provider.ts";
import { RedisServer } from "../test/kv/redis-server.ts";

export interface SecuredGateway {
  url: string;
  pid: number | undefined;
  /** The redis-server holding its rate-limit counters and replay keys: its CPU is part of what a request costs. */
  redisPid: number | undefined;
  /** One Authorization header per simulated user. */
  authHeaders: Record<string, string>[];
  stop(): Promise<void>;
}

const AUDIENCE = "https://bench.svc-gateway.test/api";

export interface SecuredGatewayOptions {
  /** Names its config and log files in dir, so two secured gateways can run side by side. Default "secured". */
  name?: string;
  /** An `exporters:` section appended to the config (the "exported" path). */
  exportersYaml?: string;
  env?: Record<string, string>;
  /** The gateway program to run (the bench's compiled gateway). */
  program?: string;
}

export async function startSecuredGateway(
  dir: string,
  upstreamUrl: string,
  users: number,
  options: SecuredGatewayOptions = {},
): Promise<SecuredGateway> {
  const name = options.name ?? "secured";
  const idp: TestIdentityProvider = await startTestIdentityProvider();
  let redis: RedisServer | undefined;
  let gateway: SpawnedGateway | undefined;
  try {
    redis = await RedisServer.start();
    const server = (name: string, path: string, extra = "") => `  - name: ${name}
    url: ${upstreamUrl}${path}
    upstream_auth_type: none
    rbac_enabled: true
    allowed_groups: [bench]
    capability_rbac_enabled: true
${extra}`;
    const everyRecognizer = ENTITY_TYPES.map((entity) => `        - { entity_type: ${entity} }`).join("\n");
    const scrubbing = `    security:
      enabled: true
      recognizers:
${everyRecognizer}
`;
    const firewall = `    firewall:
      enabled: true
      mode: block
`;
    const config = join(dir, `${name}.yaml`);
    await writeFile(
      config,
      `version: "1.0"
${identityProvidersYaml(idp, { name: "bench-idp", audience: AUDIENCE })}gateway_policy:
  capability_rbac:
    read_only: { default_groups: [bench] }
    destructive: { default_groups: [bench] }
    unspecified: { default_groups: [bench] }
security:
  rate_limiting: { enabled: true, requests_per_minute: 5000, window_seconds: 10 }
servers:
${server("bench-json", "/json/mcp")}${server("bench-sse", "/sse/mcp")}${server("bench-pii", "/json/mcp", scrubbing)}${server("bench-inspected", "/json/mcp", scrubbing + firewall)}${options.exportersYaml ?? ""}`,
    );
    gateway = await spawnGateway(config, {
      env: {
        REDIS_URL: redis.url,
        SVC_ALLOW_ANONYMOUS: "false",
        SVC_AUDIT_SPOOL_DIR: join(dir, `${name}-spool`),
        ...options.env,
      },
      logFile: join(dir, `${name}.log`),
      program: options.program,
      // A loaded machine (shared cores, other suites running) can take a while to start a gateway with Redis.
      timeoutMs: 90_000,
    });
    const now = Math.floor(Date.now() / 1000);
    const authHeaders: Record<string, string>[] = [];
    for (let i = 0; i < users; i++) {
      const token = await idp.sign({
        sub: `bench-user-${i}`,
        aud: AUDIENCE,
        groups: ["bench"],
        exp: now + 3600,
      });
      authHeaders.push({ authorization: `Bearer ${token}` });
    }
    const running = gateway;
    const kv = redis;
    return {
      url: running.url,
      pid: running.process.pid,
      redisPid: kv.pid,
      authHeaders,
      stop: async () => {
        await running.stop();
        await kv.kill();
        await idp.close();
      },
    };
  } catch (error) {
    await gateway?.stop();
    await redis?.kill();
    await idp.close();
    throw error;
  }
}
