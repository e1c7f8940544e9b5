import type { IncomingMessage } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Hono } from "hono";
import type { AuthLayer } from "../auth/runtime.ts";
import { type CheckModule, mountHealth } from "./health.ts";
import { loopbackHostGuard } from "./host-check.ts";
import type { Catalog } from "./mcp-server.ts";
import { readJsonBody } from "./request-body.ts";
import type { McpEndpoint } from "./sessions.ts";

export interface AppOptions {
  catalog: Catalog;
  endpoint: McpEndpoint;
  auth: AuthLayer | undefined;
  loopback: boolean;
  health?: CheckModule;
  readiness?: CheckModule;
  readySince: Date;
}

type Env = { Variables: { authInfo?: AuthInfo }; Bindings: { incoming?: IncomingMessage } };

/** The HTTP surface: auth routes, /health, /ready and MCP at exactly /mcp (no /mcp/ alias). */
export function createApp(options: AppOptions): Hono<Env> {
  const app = new Hono<Env>();
  options.auth?.install(app as unknown as Hono);
  const healthOptions = { settings: options.catalog.settings, readySince: options.readySince };
  mountHealth(app as unknown as Hono, {
    ...healthOptions,
    ...(options.health ? { health: options.health } : {}),
    ...(options.readiness ? { readiness: options.readiness } : {}),
  });
  // Order matters: refuse rebinding attempts before spending anything on auth; auth before any MCP work.
  if (options.loopback) app.use("/mcp", loopbackHostGuard());
  if (options.auth) app.use("/mcp", options.auth.guard);
  app.all("/mcp", async (c) => {
    const incoming = c.env?.incoming;
    const isJsonPost = c.req.method === "POST" && c.req.header("content-type")?.includes("application/json");
    if (!incoming || !isJsonPost) return options.endpoint.handle(c.req.raw, c.get("authInfo"));
    const body = await readJsonBody(incoming);
    if (!body.ok) return body.response;
    return options.endpoint.handle(c.req.raw, c.get("authInfo"), body.value);
  });
  return app;
}
