import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../../src/build/build-project.ts";
import type { Spawned } from "../helpers/processes.ts";
import { serveBuilt } from "../helpers/projects.ts";
import { type IdentityProvider, startIdentityProvider } from "./helpers/identity-provider.ts";

// framework/examples/jwt-auth, built for production and run as a process, with tokens from a real
// oidc-provider and a loopback helpdesk API that records what the example sends it.

const EXAMPLE = fileURLToPath(new URL("../../examples/jwt-auth", import.meta.url));
const AUDIENCE = "https://tickets-mcp.example.test/mcp";
const SERVICE_KEY = "helpdesk-service-key";

let idp: IdentityProvider;
let helpdesk: ReturnType<typeof serve>;
let helpdeskUrl: string;
const seen: Array<{ method: string; authorization?: string; onBehalfOf?: string }> = [];
let example: { server: Spawned; url: string } | undefined;

beforeAll(async () => {
  idp = await startIdentityProvider();
  const api = new Hono();
  api.use(async (c, next) => {
    seen.push({
      method: c.req.method,
      ...(c.req.header("authorization") ? { authorization: c.req.header("authorization") } : {}),
      ...(c.req.header("x-on-behalf-of") ? { onBehalfOf: c.req.header("x-on-behalf-of") } : {}),
    });
    await next();
  });
  api.get("/tickets", (c) => c.json([{ id: "T-1", title: "VPN down", status: "open", owner: "x" }]));
  api.post("/tickets", async (c) =>
    c.json({
      id: "T-2",
      title: (await c.req.json()).title,
      status: "open",
      owner: c.req.header("x-on-behalf-of"),
    }),
  );
  helpdesk = serve({ fetch: api.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => helpdesk.once("listening", () => resolve()));
  helpdeskUrl = `http://127.0.0.1:${(helpdesk.address() as AddressInfo).port}/`;

  await buildProject(EXAMPLE, "prod");
  example = await serveBuilt(EXAMPLE, {
    JWKS_URI: `${idp.issuer}/jwks`,
    JWT_ISSUER: idp.issuer,
    JWT_AUDIENCE: AUDIENCE,
    TICKETS_API_URL: helpdeskUrl,
    TICKETS_API_KEY: SERVICE_KEY,
  });
}, 120_000);

afterAll(async () => {
  await example?.server.stop();
  await new Promise<void>((resolve) => helpdesk?.close(() => resolve()));
  await idp?.close();
});

async function call(token: string, name: string, args: Record<string, unknown> = {}) {
  const client = new Client({ name: "example-test", version: "1.0.0" });
  const url = new URL(`${example?.url}/mcp`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  try {
    const result = await client.callTool({ name, arguments: args });
    return {
      isError: result.isError === true,
      text: (result.content as Array<{ text: string }>)[0]?.text ?? "",
    };
  } finally {
    await client.close();
  }
}

describe("examples/jwt-auth", () => {
  it("refuses calls without a token, pointing at its metadata", async () => {
    const response = await fetch(`${example?.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("lists tickets with its own credential on behalf of the caller, never forwarding the caller's token", async () => {
    const token = await idp.token({ resource: AUDIENCE, scope: "tickets:read", alg: "ES256" });
    const { isError, text } = await call(token, "list_tickets", { status: "open" });
    expect(isError).toBe(false);
    expect(JSON.parse(text).tickets[0].id).toBe("T-1");
    const request = seen.at(-1);
    expect(request).toEqual({
      method: "GET",
      authorization: `Bearer ${SERVICE_KEY}`,
      onBehalfOf: "svc-test-client",
    });
    expect(JSON.stringify(seen)).not.toContain(token);
  });

  it("needs tickets:write to open a ticket", async () => {
    const reader = await idp.token({ resource: AUDIENCE, scope: "tickets:read" });
    const refused = await call(reader, "create_ticket", { title: "Printer on fire" });
    expect(refused).toEqual({ isError: true, text: "Forbidden: your token lacks the scope tickets:write" });
    const writer = await idp.token({ resource: AUDIENCE, scope: "tickets:read tickets:write" });
    const created = await call(writer, "create_ticket", { title: "Printer on fire" });
    expect(JSON.parse(created.text).ticket).toMatchObject({ id: "T-2", owner: "svc-test-client" });
  });

  it("refuses tokens without tickets:read with 403", async () => {
    const token = await idp.token({ resource: AUDIENCE, scope: "tools:read" });
    await expect(call(token, "whoami")).rejects.toThrow(/403|insufficient_scope/);
  });

  it("does not start when JWT_AUDIENCE is missing", async () => {
    await expect(
      serveBuilt(EXAMPLE, { JWKS_URI: `${idp.issuer}/jwks`, JWT_ISSUER: idp.issuer, JWT_AUDIENCE: "" }),
    ).rejects.toThrow(/JWT_AUDIENCE: environment variable is not set/);
  });
});
