// The HTTP surface: the admin endpoints and the MCP route. No global middleware on purpose: each route is
// a single handler, which keeps Hono on its fast path and leaves the proxied response untouched.
import { randomUUID } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import { errorResponse } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { handleMcpRequest, type McpPipelineDeps } from "../pipeline/mcp-pipeline.ts";
import type { EndpointAnswer } from "./health.ts";
import type { GatewayMetrics } from "./metrics.ts";

export interface GatewayAppDeps extends McpPipelineDeps {
  metrics: GatewayMetrics;
  health: () => EndpointAnswer;
  readiness: () => EndpointAnswer;
}

function json(answer: EndpointAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-request-id": randomUUID(),
    },
  });
}

export function createGatewayApp(deps: GatewayAppDeps): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.get("/health", () => json(deps.health()));
  app.get("/readiness", () => json(deps.readiness()));
  app.get(
    "/metrics",
    () =>
      new Response(deps.metrics.render(), {
        headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "x-request-id": randomUUID() },
      }),
  );
  app.all("/:server/mcp", (c) => handleMcpRequest(c, deps));
  app.notFound((c) =>
    errorResponse(
      new GatewayError(
        "path_not_found",
        `No route for ${c.req.method} ${c.req.path}; MCP lives at /{server}/mcp`,
      ),
      {
        requestId: randomUUID(),
      },
    ),
  );
  app.onError((error) => {
    deps.logger.error("unhandled error", { error });
    return errorResponse(new GatewayError("internal", "Internal gateway error"), { requestId: randomUUID() });
  });
  return app;
}
