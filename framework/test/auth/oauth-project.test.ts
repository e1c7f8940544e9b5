import { generateKeyPairSync } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { auth, extractResourceMetadataUrl } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../../src/build/build-project.ts";
import type { Spawned } from "../helpers/processes.ts";
import { serveBuilt, tempDir, writeProject } from "../helpers/projects.ts";
import { followAuthorization, MemoryOAuthClient } from "./helpers/oauth-client.ts";

// The built-in OAuth server inside a real built project, served by the framework runtime as a process:
// auth.ts with an approval hook, the signing key from OAUTH_SIGNING_KEY, state in SVC_DATA_DIR.

const SIGNING_KEY = generateKeyPairSync("ed25519")
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();

let root: Awaited<ReturnType<typeof tempDir>>;
let served: { server: Spawned; url: string } | undefined;

beforeAll(async () => {
  root = await tempDir("oauth-project");
  await writeProject(root.dir, {
    "svc.json": { name: "oauth-project" },
    "auth.ts": `import { configureAuth, OAuthServerConfig } from "@svc-mcp/framework/auth";
configureAuth(new OAuthServerConfig({
  valid_scopes: ["notes:read"],
  required_scopes: ["notes:read"],
  base_url_env_var: "OAUTH_BASE_URL",
  approve: (request) => ({ approved: true, subject: "carol", scopes: request.scopes }),
}));
`,
    "tools/token_info.ts": `import { defineTool } from "@svc-mcp/framework";
import { getAuthToken } from "@svc-mcp/framework/auth";
export default defineTool({
  description: "Shows what the tool sees of the caller",
  handler: (_args, context) => ({ hasToken: getAuthToken() !== undefined, sub: context.authInfo?.extra?.sub, scopes: context.authInfo?.scopes }),
});
`,
  });
  await buildProject(root.dir, "prod");
  served = await serveBuilt(root.dir, {
    NODE_ENV: "production",
    OAUTH_SIGNING_KEY: SIGNING_KEY,
    SVC_DATA_DIR: join(root.dir, "state"),
  });
}, 120_000);

afterAll(async () => {
  await served?.server.stop();
  await root?.cleanup();
});

describe("OAuth server in a built project", () => {
  it("authorizes an MCP SDK client end to end and the tool sees the approved user", async () => {
    const mcpUrl = `${served?.url}/mcp`;
    const client = new MemoryOAuthClient("none");
    const challenge = await fetch(mcpUrl, { method: "POST" });
    expect(challenge.status).toBe(401);
    const resourceMetadataUrl = extractResourceMetadataUrl(challenge) as URL;
    expect(await auth(client, { serverUrl: mcpUrl, resourceMetadataUrl })).toBe("REDIRECT");
    const code = (await followAuthorization(client.authorizationUrl as URL)).get("code") as string;
    expect(await auth(client, { serverUrl: mcpUrl, authorizationCode: code })).toBe("AUTHORIZED");

    const mcp = new Client({ name: "oauth-project-test", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: client }));
    const result = await mcp.callTool({ name: "token_info", arguments: {} });
    await mcp.close();
    const seen = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}");
    expect(seen).toEqual({ hasToken: true, sub: "carol", scopes: ["notes:read"] });

    const clients = await readFile(join(root.dir, "state", "oauth", "clients.json"), "utf8");
    expect(clients).toContain((client.information as { client_id: string }).client_id);
  });

  it("does not start without OAUTH_SIGNING_KEY in production", async () => {
    await expect(
      serveBuilt(root.dir, {
        NODE_ENV: "production",
        OAUTH_SIGNING_KEY: "",
        SVC_DATA_DIR: join(root.dir, "state2"),
      }),
    ).rejects.toThrow(/OAUTH_SIGNING_KEY: is not set/);
  });
});
