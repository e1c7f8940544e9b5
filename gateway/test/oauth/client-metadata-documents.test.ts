// Client ID Metadata Documents: the MCP SDK client identifies by an https URL instead of registering; the gateway
// (a spawned `svc-gateway start`, trusting the document host's certificate as a real one is trusted) fetches the
// document through the guarded client, and the login completes with Dynamic Client Registration switched off. A
// document on a private or loopback address the operator did not trust is never fetched.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import selfsigned from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { Browser } from "./support/browser.ts";
import { CLIENT_REDIRECT, MemoryClientProvider } from "./support/client-provider.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { oauthGatewayConfig } from "./support/oauth-gateway.ts";
import { authorizeUrl, pkce } from "./support/oauth-requests.ts";

const BIN = fileURLToPath(new URL("../../bin/svc-gateway.js", import.meta.url));

/** An https server on loopback publishing one client's metadata document at /client.json; counts its requests. */
interface DocumentHost {
  origin: string;
  clientId: string;
  requests: number;
  server: Server;
}

async function startDocumentHost(cert: string, key: string, name: string): Promise<DocumentHost> {
  const host = { origin: "", clientId: "", requests: 0 } as DocumentHost;
  host.server = createServer({ key, cert }, (req, res) => {
    host.requests++;
    if (req.url !== "/client.json") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" });
    res.end(
      JSON.stringify({
        client_id: host.clientId,
        client_name: name,
        redirect_uris: [CLIENT_REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }),
    );
  });
  await new Promise<void>((resolve) => host.server.listen(0, "127.0.0.1", resolve));
  host.origin = `https://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  host.clientId = `${host.origin}/client.json`;
  return host;
}

let dir: string;
let idp: CompanyIdp;
let upstream: Upstream;
let trustedHost: DocumentHost;
let untrustedHost: DocumentHost;
let gatewayUrl: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-gw-cimd-"));
  const pems = await selfsigned.generate([{ name: "commonName", value: "127.0.0.1" }], {
    keyType: "ec",
    curve: "P-256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
    ],
  });
  const caFile = join(dir, "ca.pem");
  await writeFile(caFile, pems.cert);
  trustedHost = await startDocumentHost(pems.cert, pems.private, "Registry Client");
  untrustedHost = await startDocumentHost(pems.cert, pems.private, "Loopback Client");
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  idp = await startCompanyIdp({ gatewayUrl, groups: { alice: ["staff"] } });
  upstream = await startUpstream({ stateful: true });
  const configPath = join(dir, "config.yaml");
  await writeFile(
    configPath,
    oauthGatewayConfig({
      port,
      idpIssuer: idp.issuer,
      upstreamUrl: upstream.url,
      oauthYaml: [
        "  registration:",
        "    enabled: false",
        "  client_id_metadata_documents:",
        `    trusted_origins: [${JSON.stringify(trustedHost.origin)}]`,
      ].join("\n"),
    }),
  );
  child = spawn(process.execPath, [BIN, "start", "--config", configPath, "--port", String(port)], {
    env: {
      ...process.env,
      LOG_LEVEL: "info",
      SVC_CONFIG_POLL_SECONDS: "0",
      SVC_AUDIT_FILE: "/dev/null",
      SVC_PUBLIC_URL: gatewayUrl,
      SVC_OAUTH_DEV_KEYS: "true",
      NODE_EXTRA_CA_CERTS: caFile,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    child?.once("exit", (code) => reject(new Error(`the gateway exited with ${code}`)));
    lines.on("line", (line) => {
      if (line.includes('"msg":"listening"')) resolve();
    });
  });
}, 60_000);

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await upstream?.close();
  await idp?.close();
  for (const host of [trustedHost, untrustedHost]) {
    host?.server.closeAllConnections();
    host?.server.close();
  }
  await rm(dir, { recursive: true, force: true });
});

describe("Client ID Metadata Documents", () => {
  it("are advertised, and registration is not when it is switched off", async () => {
    const metadata = (await (
      await fetch(`${gatewayUrl}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.registration_endpoint).toBeUndefined();
    const register = await fetch(`${gatewayUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [CLIENT_REDIRECT] }),
    });
    await register.body?.cancel();
    expect(register.status).toBe(404);
  });

  it("log in the MCP SDK client that identifies by its document URL, through to a tool call", async () => {
    const provider = new MemoryClientProvider(CLIENT_REDIRECT, trustedHost.clientId);
    const server = new URL(`${gatewayUrl}/tools/mcp`);
    const connect = async () => {
      const client = new Client({ name: "cimd-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(server, { authProvider: provider }));
      return client;
    };
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(trustedHost.clientId);
    let consent = "";
    const { landed } = await new Browser().authorize(
      String(provider.authorizationUrl),
      CLIENT_REDIRECT,
      "alice",
      {
        onPage: (url, html) => {
          if (url.pathname.startsWith("/oauth/interaction/")) consent = html;
        },
      },
    );
    expect(consent).toContain("Registry Client");
    const code = landed.searchParams.get("code");
    expect(code, landed.href).toBeTruthy();
    await new StreamableHTTPClientTransport(server, { authProvider: provider }).finishAuth(code as string);
    const client = await connect();
    const result = await client.callTool({ name: "echo", arguments: { text: "by document" } });
    expect(JSON.stringify(result.content)).toContain("by document");
    await client.close();
    expect(trustedHost.requests).toBeGreaterThan(0);
  }, 60_000);

  it("never fetch a document on a loopback or private address the operator did not trust", async () => {
    for (const clientId of [
      untrustedHost.clientId,
      "https://10.0.0.1/client.json",
      "https://169.254.169.254/latest/client.json",
      `https://[::1]:${new URL(untrustedHost.origin).port}/client.json`,
    ]) {
      const response = await fetch(
        authorizeUrl(gatewayUrl, {
          client_id: clientId,
          redirect_uri: CLIENT_REDIRECT,
          code_challenge: pkce().challenge,
          code_challenge_method: "S256",
        }),
        { redirect: "manual" },
      );
      expect(response.status, clientId).toBe(400);
      expect(await response.text()).toMatch(/invalid_client/);
    }
    expect(untrustedHost.requests).toBe(0);
  }, 60_000);
});
