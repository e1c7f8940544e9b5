// A spawned gateway with upstream OAuth towards real vendors: the company identity provider with a login (and the
// gateway's login client there), two vendors (real oidc-provider authorization servers with Dynamic Client
// Registration) each behind its own MCP server, Redis-free (one replica), audit to a file. Everything runs on
// loopback over plain http, so the gateway runs with SVC_ALLOW_INSECURE_UPSTREAM_OAUTH (development); the guard's
// own rules are tested without it (gateway-outbound-guard.test.ts).
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { startVendor, type Vendor } from "svc-testkit/vendor-authorization-server";
import { freePort } from "../../../bench/free-port.ts";
import { type SpawnedGateway, spawnGateway } from "../../conformance/spawn-gateway.ts";
import {
  type CompanyLoginIdp,
  GATEWAY_AUDIENCE,
  LOGIN_CLIENT,
  startCompanyLoginIdp,
} from "./company-login-idp.ts";
import { startVendorMcpServer, type VendorMcpServer } from "./vendor-mcp-server.ts";

export interface ConnectStack {
  gatewayUrl: string;
  idp: CompanyLoginIdp;
  vendors: Vendor[];
  /** `user` calls `whoami` on `server`: the vendor subject it ran as, or the -32042 elicitation's URL and id. */
  whoami(user: string, server?: string): Promise<{ ranAs: string } | { link: string; elicitationId: string }>;
  /** Audit events of kind upstream_oauth written so far. */
  auditEvents(): Promise<Array<{ reason: string; subject: string; decision: string | null; server: string }>>;
  close(): Promise<void>;
}

export async function startConnectStack(env: Record<string, string> = {}): Promise<ConnectStack> {
  const dir = await mkdtemp(join(tmpdir(), "svc-connect-"));
  const port = await freePort();
  const gatewayUrl = `http://127.0.0.1:${port}`;
  // On ::1: another site than the gateway, so the browser cookie must survive a cross-site return (SameSite=Lax).
  const idp = await startCompanyLoginIdp(gatewayUrl, "::1");
  const vendors = [
    await startVendor({ registration: true, scope: "mcp:tools" }),
    await startVendor({ registration: true, scope: "mcp:tools" }),
  ];
  const upstreams: VendorMcpServer[] = [];
  for (const vendor of vendors) upstreams.push(await startVendorMcpServer(vendor));
  const auditFile = join(dir, "audit.jsonl");
  const configPath = join(dir, "gateway.yaml");
  await writeFile(
    configPath,
    [
      'version: "1.0"',
      "identity_providers:",
      "  - name: company",
      "    type: hosted_idp",
      `    issuer: ${JSON.stringify(idp.issuer)}`,
      `    jwks_uri: ${JSON.stringify(idp.jwksUri)}`,
      `    api_identifiers: [${JSON.stringify(GATEWAY_AUDIENCE)}]`,
      `    login_client_id: ${LOGIN_CLIENT.id}`,
      "    login_client_secret: ${LOGIN_SECRET}",
      "servers:",
      ...upstreams.flatMap((upstream, index) => [
        `  - name: ${index === 0 ? "vendor" : "other"}`,
        `    url: ${JSON.stringify(upstream.mcpUrl)}`,
      ]),
      "",
    ].join("\n"),
  );
  let gateway: SpawnedGateway;
  try {
    gateway = await spawnGateway(configPath, {
      port,
      env: {
        SVC_ALLOW_ANONYMOUS: "false",
        SVC_PUBLIC_URL: gatewayUrl,
        SVC_OAUTH_KV_KEY: randomBytes(32).toString("base64"),
        SVC_ALLOW_INSECURE_UPSTREAM_OAUTH: "true",
        SVC_AUDIT_FILE: auditFile,
        LOGIN_SECRET: LOGIN_CLIENT.secret,
        ...env,
      },
    });
  } catch (error) {
    await Promise.all([idp.close(), ...vendors.map((v) => v.close()), ...upstreams.map((u) => u.close())]);
    throw error;
  }
  return {
    gatewayUrl,
    idp,
    vendors,
    async whoami(user, server = "vendor") {
      const client = new Client({ name: "connect-test", version: "1.0.0" });
      try {
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/${server}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${await idp.userToken(user)}` } },
          }),
        );
        const result = await client.callTool({ name: "whoami", arguments: {} });
        return { ranAs: (result.content as Array<{ text: string }>)[0]?.text ?? "" };
      } catch (error) {
        if (!(error instanceof McpError) || error.code !== -32042) throw error;
        const elicitation = (error.data as { elicitations: Array<{ url: string; elicitationId: string }> })
          .elicitations[0];
        if (elicitation === undefined) throw error;
        return { link: elicitation.url, elicitationId: elicitation.elicitationId };
      } finally {
        await client.close();
      }
    },
    async auditEvents() {
      const text = await readFile(auditFile, "utf8").catch(() => "");
      return text
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))
        .filter((event) => event.kind === "upstream_oauth");
    },
    async close() {
      await gateway.stop();
      await Promise.all([idp.close(), ...vendors.map((v) => v.close()), ...upstreams.map((u) => u.close())]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The outcome's link, or a failure naming what came instead. */
export function linkOf(outcome: { ranAs: string } | { link: string; elicitationId: string }): string {
  if ("link" in outcome) return outcome.link;
  throw new Error(`expected a connect link, the call ran as ${outcome.ranAs}`);
}
