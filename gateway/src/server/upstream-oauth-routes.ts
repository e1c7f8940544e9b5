// The HTTP side of upstream OAuth, under the gateway's OAuth routes (they exist whether or not oauth_server is on):
// - GET  /oauth/upstream/connect/{link}: the link a user is handed; on to the vendor once the browser is that user's;
// - GET  /oauth/upstream/login: the identity provider's answer to the sign-in that link may need;
// - GET  /oauth/upstream/callback: where vendors send the user's browser back (a page saying what happened);
// - GET  /oauth/upstream/connections: the calling user's connections (JSON), authenticated like an MCP request;
// - DELETE /oauth/upstream/connections/{server}: revokes one (204; 404 when there was none).
// These carry no gateway token (browser redirects): the browser's user is established by a sign-in at the identity
// provider and the browser by its cookie (upstream-oauth/connect-flow.ts); each state is good for one use only.
import { randomUUID } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import { errorResponse } from "../errors/error-response.ts";
import { asGatewayError, GatewayError } from "../errors/gateway-error.ts";
import {
  type AuthRequest,
  authenticate,
  requireLiveGrant,
  requireResource,
} from "../identity/authenticate.ts";
import { principalKey } from "../identity/principal-key.ts";
import type { Logger } from "../log/logger.ts";
import { escapeHtml } from "../oauth/escape-html.ts";
import type { OAuthServer } from "../oauth/oauth-server.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import { CONNECT_PATH, type FlowAnswer, LOGIN_PATH } from "../upstream-oauth/connect-flow.ts";
import {
  AuthorizationCallbackError,
  CALLBACK_PATH,
  type UpstreamCaller,
  type UpstreamOAuth,
} from "../upstream-oauth/upstream-oauth.ts";

export const CONNECTIONS_PATH = "/oauth/upstream/connections";

export interface UpstreamOAuthRouteDeps {
  upstreamOAuth?: UpstreamOAuth;
  currentConfig: () => ConfigSnapshot | undefined;
  publicUrl: string | undefined;
  logger: Logger;
  /** The gateway's own authorization server, when on: its tokens must be for the whole gateway, and live. */
  oauthServer?: () => OAuthServer | undefined;
}

type AppContext = Context<{ Bindings: HttpBindings }>;

export function installUpstreamOAuthRoutes(
  app: Hono<{ Bindings: HttpBindings }>,
  deps: UpstreamOAuthRouteDeps,
): void {
  app.get(`${CONNECT_PATH}/:link`, (c) =>
    flowRoute(c, deps, (flow, browser) => flow.open(c.req.param("link"), browser)),
  );
  app.get(LOGIN_PATH, (c) =>
    flowRoute(c, deps, (flow, browser) => flow.signInReturned(currentUrl(c, deps), browser)),
  );
  app.get(CALLBACK_PATH, async (c) => {
    const upstreamOAuth = deps.upstreamOAuth;
    if (upstreamOAuth === undefined) return page(404, "Not available", "This gateway has no upstream OAuth.");
    try {
      const { server } = await upstreamOAuth.completeAuthorization(currentUrl(c, deps), browserOf(c));
      return page(
        200,
        "Connected",
        `Your account at '${server}' is connected. Return to your MCP client and retry.`,
      );
    } catch (error) {
      if (error instanceof AuthorizationCallbackError) {
        deps.logger.warn("upstream authorization callback refused", { error: error.message });
        return page(error.status, "Not connected", error.message);
      }
      deps.logger.error("upstream authorization callback failed", { error });
      return page(500, "Not connected", "Internal gateway error");
    }
  });
  app.get(CONNECTIONS_PATH, (c) =>
    asUser(c, deps, async (upstreamOAuth, caller) =>
      json(200, { connections: await upstreamOAuth.connections(caller) }),
    ),
  );
  app.delete(`${CONNECTIONS_PATH}/:server`, (c) =>
    asUser(c, deps, async (upstreamOAuth, caller) => {
      const server = c.req.param("server");
      if (await upstreamOAuth.revoke(server, caller)) return new Response(null, { status: 204 });
      throw new GatewayError("path_not_found", `No upstream connection to '${server}' for this user`);
    }),
  );
}

/** The URL the browser asked for, on the gateway's public origin (never the request's Host header). */
function currentUrl(c: AppContext, deps: UpstreamOAuthRouteDeps): URL {
  return new URL(c.env.incoming.url ?? "/", deps.publicUrl ?? "http://gateway.invalid");
}

function browserOf(c: AppContext): { cookie: string | undefined; source: string | undefined } {
  return { cookie: c.env.incoming.headers.cookie, source: c.env.incoming.socket.remoteAddress };
}

/** A connect-link route: its answer as a redirect or a page, with the browser cookie when one was made. */
async function flowRoute(
  c: AppContext,
  deps: UpstreamOAuthRouteDeps,
  handle: (
    flow: NonNullable<UpstreamOAuth["connectFlow"]>,
    browser: ReturnType<typeof browserOf>,
  ) => Promise<FlowAnswer>,
): Promise<Response> {
  const flow = deps.upstreamOAuth?.connectFlow;
  if (flow === undefined) {
    return page(
      503,
      "Not available",
      "Connecting accounts needs SVC_OAUTH_KV_KEY and SVC_PUBLIC_URL on this gateway.",
    );
  }
  let answer: FlowAnswer;
  try {
    answer = await handle(flow, browserOf(c));
  } catch (error) {
    deps.logger.error("connect link failed", { error });
    return page(500, "Not connected", "Internal gateway error");
  }
  const response =
    answer.kind === "redirect"
      ? new Response(null, {
          status: 303,
          headers: {
            location: answer.location,
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
          },
        })
      : page(answer.status, answer.title, answer.text);
  for (const cookie of answer.cookies) response.headers.append("set-cookie", cookie);
  return response;
}

/** Runs `handle` for the user the request's bearer token names (401 with a challenge otherwise). */
async function asUser(
  c: AppContext,
  deps: UpstreamOAuthRouteDeps,
  handle: (upstreamOAuth: UpstreamOAuth, caller: UpstreamCaller) => Promise<Response>,
): Promise<Response> {
  const requestId = randomUUID();
  try {
    const snapshot = deps.currentConfig();
    if (snapshot === undefined)
      throw new GatewayError("not_ready", "The gateway is starting; try again shortly");
    if (deps.upstreamOAuth === undefined) {
      throw new GatewayError("path_not_found", "This gateway has no upstream OAuth");
    }
    const incoming = c.env.incoming;
    const dpop = incoming.headers.dpop;
    const request: AuthRequest = {
      authorization: incoming.headers.authorization,
      dpop: typeof dpop === "string" ? dpop : undefined,
      method: incoming.method ?? "GET",
      rawUrl: incoming.url,
      baseUrl: deps.publicUrl ?? `http://${incoming.headers.host ?? "localhost"}`,
      server: "",
      verifyUnboundProof: false,
    };
    const authenticated = await authenticate(snapshot.auth, request);
    // A token of the gateway's own authorization server must be for the whole gateway (one for a single server does
    // not manage the user's connections to all of them), and its grant still alive.
    const oauthServer = deps.oauthServer?.();
    requireResource(authenticated, request, oauthServer?.issuer);
    await requireLiveGrant(authenticated, request, oauthServer?.isGrantLive);
    const { principal } = authenticated;
    return await handle(deps.upstreamOAuth, { principal, owner: principalKey(principal), requestId });
  } catch (error) {
    return errorResponse(asGatewayError(error), { requestId });
  }
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

function page(status: number, title: string, text: string): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      // The page shows a vendor's error text: nothing on it may run or be framed.
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
      "referrer-policy": "no-referrer",
    },
  });
}
