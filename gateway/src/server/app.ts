// The HTTP surface: the admin endpoints and the MCP route. No global middleware on purpose: each route is
// a single handler, which keeps Hono on its fast path and leaves the proxied response untouched.
import { randomUUID } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import { errorResponse } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { protectedResourceMetadata } from "../identity/resource-metadata.ts";
import { handleMcpRequest, type McpPipelineDeps } from "../pipeline/mcp-pipeline.ts";
import { corsResponseHeaders, preflightAnswer } from "../proxy/cors.ts";
import { checkOrigin } from "../proxy/origin-guard.ts";
import type { ProxyAnswer } from "../proxy/proxy-answer.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import type { EndpointAnswer } from "./health.ts";
import { unhandledErrorAnswer } from "./mcp-route.ts";
import { installUpstreamOAuthRoutes } from "./upstream-oauth-routes.ts";

export interface GatewayAppDeps extends McpPipelineDeps {
  metrics: GatewayMetrics;
  health: () => EndpointAnswer;
  readiness: () => EndpointAnswer;
}

function json(answer: EndpointAnswer, extraHeaders?: Record<string, string>): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-request-id": randomUUID(),
      ...extraHeaders,
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
  // RFC 9728 protected-resource metadata: where an MCP client learns which authorization servers issue tokens
  // for us. The path-scoped form is what the 401 challenge's resource_metadata points at.
  const metadata = (c: Context<{ Bindings: HttpBindings }>, server?: string): Response => {
    // The Origin/Host guard of /{server}/mcp, first here too: without SVC_PUBLIC_URL the answer's URLs come from
    // Host, and a rebound page must neither get metadata naming its own domain nor learn which servers exist.
    const origin = c.req.header("origin");
    const refusal = checkOrigin(deps.originPolicy, origin, c.req.header("host"));
    if (refusal !== undefined) return errorResponse(refusal, { requestId: randomUUID() });
    const cors = origin === undefined ? undefined : corsResponseHeaders(origin);
    const snapshot = deps.currentConfig();
    if (snapshot === undefined) {
      return errorResponse(new GatewayError("not_ready", "The gateway is starting; try again shortly"), {
        requestId: randomUUID(),
        cors,
      });
    }
    if (server !== undefined && !snapshot.routes.get(server)?.enabled) {
      return errorResponse(new GatewayError("server_not_found", `No MCP server named '${server}'`), {
        requestId: randomUUID(),
        cors,
      });
    }
    const base = deps.publicUrl ?? `http://${c.req.header("host") ?? "localhost"}`;
    return json(
      { status: 200, body: { ...protectedResourceMetadata(snapshot.loaded.config, base, server) } },
      cors,
    );
  };
  app.get("/.well-known/oauth-protected-resource", (c) => metadata(c));
  app.get("/.well-known/oauth-protected-resource/:server/mcp", (c) => metadata(c, c.req.param("server")));
  // The preflight of a browser-based client's metadata request, under the same Origin/Host guard.
  const metadataPreflight = (c: Context<{ Bindings: HttpBindings }>): Response => {
    const requestId = randomUUID();
    const origin = c.req.header("origin");
    const refusal = checkOrigin(deps.originPolicy, origin, c.req.header("host"));
    if (refusal !== undefined || origin === undefined) {
      return errorResponse(refusal ?? new GatewayError("path_not_found", "Not a CORS preflight"), {
        requestId,
      });
    }
    const answer = preflightAnswer(origin, requestId);
    return new Response(null, { status: answer.status, headers: answer.headers });
  };
  app.options("/.well-known/oauth-protected-resource", metadataPreflight);
  app.options("/.well-known/oauth-protected-resource/:server/mcp", metadataPreflight);
  // The authorization server (oauth_server) owns /oauth/* and its discovery documents; oidc-provider writes the
  // response itself on the Node objects.
  const oauth = async (c: Context<{ Bindings: HttpBindings }>): Promise<Response> => {
    const server = deps.oauthServer?.();
    if (server === undefined) {
      return errorResponse(
        new GatewayError(
          "path_not_found",
          "This gateway is no OAuth authorization server (oauth_server is not set)",
        ),
        { requestId: randomUUID() },
      );
    }
    await server.handle(c.env.incoming, c.env.outgoing, deps.originPolicy);
    return RESPONSE_ALREADY_SENT;
  };
  // GET and the CORS preflight a browser-based client sends first (it adds MCP-Protocol-Version).
  for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
    app.get(path, oauth);
    app.options(path, oauth);
  }
  // Upstream OAuth's callback and connections live under /oauth/upstream/, before the authorization server's catch-all.
  installUpstreamOAuthRoutes(app, deps);
  // After /{server}/mcp: /oauth/mcp stays an MCP route (no oauth_server endpoint has that path). A plain request
  // target never gets here: the server hands it to the same pipeline directly (mcp-route.ts).
  app.all("/:server/mcp", async (c) =>
    asResponse(
      await handleMcpRequest(
        { incoming: c.env.incoming, outgoing: c.env.outgoing, server: c.req.param("server") },
        deps,
      ),
    ),
  );
  app.all("/oauth/*", oauth);
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
  app.onError((error) => asResponse(unhandledErrorAnswer(deps.logger, error)));
  return app;
}

function asResponse(answer: ProxyAnswer): Response {
  // An answer the SSE relay writes itself: the adapter must leave the Node response alone.
  if (answer.sent) return RESPONSE_ALREADY_SENT;
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
