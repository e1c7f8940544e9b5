// Starts the real gateway (startGateway, in process) on 127.0.0.1 with a config file written to a temp dir,
// and connects real MCP SDK clients through it.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from "../../../src/server/start-gateway.ts";

export interface TestServer {
  name: string;
  url: string;
  enabled?: boolean;
  upstream_auth_type?: "none" | "api_key" | "oauth";
}

export function configYaml(servers: TestServer[]): string {
  const lines = ['version: "1.0"', "servers:"];
  if (servers.length === 0) return 'version: "1.0"\nservers: []\n';
  for (const server of servers) {
    lines.push(`  - name: ${JSON.stringify(server.name)}`, `    url: ${JSON.stringify(server.url)}`);
    lines.push(`    upstream_auth_type: ${server.upstream_auth_type ?? "none"}`);
    if (server.enabled === false) lines.push("    enabled: false");
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The environment of an in-process test gateway, which a test may override. Quiet logs; reloads only through the
 * directory watch (no polling). The proxy tests' clients carry no tokens: anonymous access (with identity providers
 * configured it is ignored anyway). The audit trail (JSON lines on stdout by default) would flood the test runner's
 * output; the audit tests point SVC_AUDIT_FILE at a file they read, never beside the config: that directory is
 * watched for reloads.
 */
export const TEST_GATEWAY_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: "silent",
  SVC_CONFIG_POLL_SECONDS: "0",
  SVC_ALLOW_ANONYMOUS: "true",
  SVC_AUDIT_FILE: "/dev/null",
};

export interface TestGateway {
  gateway: RunningGateway;
  url: string;
  dir: string;
  configPath: string;
  close(): Promise<void>;
}

export async function startTestGateway(
  servers: TestServer[],
  env: Record<string, string | undefined> = {},
  /** YAML appended to the generated config, e.g. an `identity_providers:` section. */
  extraYaml = "",
): Promise<TestGateway> {
  return startGatewayWithConfig(configYaml(servers) + extraYaml, env);
}

/** Starts a gateway on the whole config file `config`, for tests whose servers need more than configYaml writes. */
export async function startGatewayWithConfig(
  config: string,
  env: Record<string, string | undefined> = {},
  options: Pick<StartGatewayOptions, "groupSync"> = {},
): Promise<TestGateway> {
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-test-"));
  const configPath = join(dir, "config.yaml");
  await writeFile(configPath, config);
  const gateway = await startGateway({
    configPath,
    host: "127.0.0.1",
    port: 0,
    env: { ...TEST_GATEWAY_ENV, ...env },
    ...options,
  });
  return {
    gateway,
    url: gateway.url,
    dir,
    configPath,
    close: async () => {
      await gateway.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function connectClient(
  url: string,
  options: { headers?: Record<string, string> } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: options.headers },
  });
  const client = new Client({ name: "gateway-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}
