// The runtime with the project's auth.ts: the auth layer guards /mcp, handlers see authInfo and
// getAuthToken(), sessions stay with the client that opened them, and a broken auth.ts stops the server at start.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build/build-project.ts";
import { runToEnd, type Spawned } from "./helpers/processes.ts";
import { serveBuilt, tempDir, writeProject } from "./helpers/projects.ts";

const TOKEN_A = "dev-token-alice-0123456789";
const TOKEN_B = "dev-token-bob-0123456789";

let root: Awaited<ReturnType<typeof tempDir>>;
let server: Spawned | undefined;
let url: string;
const clients: Client[] = [];

async function clientWith(
  token: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "auth-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

beforeAll(async () => {
  root = await tempDir("auth");
  const dir = join(root.dir, "guarded");
  await writeProject(dir, {
    "svc.json": { name: "guarded" },
    "auth.ts": `import { configureAuth, StaticTokenConfig } from "@svc-mcp/framework/auth";
configureAuth(new StaticTokenConfig({
  tokens: { "${TOKEN_A}": { client_id: "alice", scopes: ["mcp:tools"] }, "${TOKEN_B}": { client_id: "bob", scopes: ["mcp:tools"] } },
  required_scopes: ["mcp:tools"],
}));\n`,
    "tools/whoami.ts": `import { defineTool } from "@svc-mcp/framework";
import { getAuthToken } from "@svc-mcp/framework/auth";
export default defineTool({ description: "Who is calling", handler: (_args, ctx) =>
  ({ clientId: ctx.authInfo?.clientId ?? null, scopes: ctx.authInfo?.scopes ?? [], token: getAuthToken() ?? null }) });\n`,
  });
  await buildProject(dir, "prod");
  ({ server, url } = await serveBuilt(dir));
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.stop();
  await root?.cleanup();
});

describe("auth.ts guards /mcp", () => {
  it("refuses a request without a token with 401 and a resource_metadata challenge", async () => {
    const response = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer .*resource_metadata="/);
    expect(server?.output()).toMatch(/static|development/i);
  });

  it("passes authInfo and the token to handlers", async () => {
    const { client } = await clientWith(TOKEN_A);
    const result = await client.callTool({ name: "whoami", arguments: {} });
    expect(result.structuredContent).toEqual({ clientId: "alice", scopes: ["mcp:tools"], token: TOKEN_A });
  });

  it("keeps a session with the client that opened it", async () => {
    const { transport } = await clientWith(TOKEN_A);
    const response = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${TOKEN_B}`,
        "mcp-session-id": transport.sessionId ?? "",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });
    expect(response.status).toBe(404);
  });
});

describe("a broken auth.ts", () => {
  it("stops the server at start with a message naming the problem", async () => {
    const dir = join(root.dir, "broken-auth");
    await writeProject(dir, {
      "svc.json": { name: "broken-auth" },
      "auth.ts": `import { configureAuth, JWTAuthConfig } from "@svc-mcp/framework/auth";
configureAuth(new JWTAuthConfig({ jwks_uri_env_var: "JWKS_URI", issuer_env_var: "JWT_ISSUER", audience_env_var: "JWT_AUDIENCE" }));\n`,
      "tools/t.ts": `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ description: "t", handler: () => "t" });\n`,
    });
    await buildProject(dir, "prod");
    const env = { PORT: "0", HOST: "127.0.0.1", JWKS_URI: "", JWT_ISSUER: "", JWT_AUDIENCE: "" };
    const run = await runToEnd(process.execPath, [join(dir, "dist", "server.mjs")], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.output).toContain('"msg":"failed to start"');
    expect(run.output).toMatch(/auth\.ts: .*JWKS_URI/);
    expect(run.output).not.toContain('"msg":"listening"');
  }, 120_000);
});
