// The gateway as its MCP clients' OAuth authorization server (config `oauth_server`), built on oidc-provider (a
// certified OpenID provider) rather than by hand. Everything lives under /oauth/* at the gateway's issuer, plus
// the RFC 8414 and OIDC discovery documents at /.well-known. Clients register themselves (RFC 7591), users log in at
// the company identity provider (federated-login.ts) and consent on a plain page; access tokens are RFC 9068 JWTs
// for one resource (RFC 8707): the whole gateway or one /{server}/mcp, which the MCP route checks.

import { hkdfSync } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import ipaddr from "ipaddr.js";
import { createLocalJWKSet } from "jose";
import Provider, { type Configuration, errors, type JWK, type KoaContextWithOIDC } from "oidc-provider";
import type { OAuthServerConfig } from "../config/index.ts";
import type { OwnIssuerTrust } from "../identity/token-verifier.ts";
import type { KvStore } from "../kv/index.ts";
import { RateLimiter, type RateLimitSettings } from "../limits/rate-limiter.ts";
import { type Logger, requestContext } from "../log/logger.ts";
import { requestIdFrom } from "../pipeline/request-id.ts";
import type { OriginPolicy } from "../proxy/origin-guard.ts";
import { clientMetadataProblem, FETCHED_CLIENT_METADATA } from "./client-metadata-policy.ts";
import { consentPage } from "./consent-page.ts";
import { consentTextFor } from "./consent-text.ts";
import { consentWarnings, destinationOf, KNOWN_CLIENTS, type KnownClient } from "./consent-warnings.ts";
import { clientEndpointCors } from "./cors.ts";
import { FederatedLogin, type PendingLogin } from "./federated-login.ts";
import { GATEWAY_SCOPE } from "./gateway-scope.ts";
import { kvAdapterFactory } from "./kv-adapter.ts";
import type { OAuthSecrets } from "./oauth-secrets.ts";
import { assertRefreshTarget } from "./refresh-target.ts";
import { SealedStore } from "./sealed-store.ts";

/** The provider name the MCP route records for users and machines holding this server's tokens. */
export const OAUTH_SERVER_PROVIDER = "oauth_server";

/** Where the interaction cookie is sent: the login and consent pages, and the identity provider's callback. */
const INTERACTION_COOKIE_PATH = "/oauth/";
/** How long the user has to come back from the identity provider. */
const LOGIN_TTL_SECONDS = 600;
/** The one "user" open registration counts against: every registration, whoever sends it, spends the same budget. */
const REGISTRATION_BUDGET = { idp: OAUTH_SERVER_PROVIDER, sub: "registration" };
/** How often a client's use extends its record: at most one rewrite per client in this long. */
const CLIENT_KEEP_INTERVAL_SECONDS = 24 * 3600;

const ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  jwks: "/oauth/jwks",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  end_session: "/oauth/session/end",
  userinfo: "/oauth/userinfo",
  introspection: "/oauth/introspect",
  pushed_authorization_request: "/oauth/par",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
};

export interface IdentityProviderForLogin {
  issuer: string;
}

export interface OAuthServerOptions {
  config: OAuthServerConfig;
  /** The issuer: oauth_server.issuer, else SVC_PUBLIC_URL. An origin; every URL of this server starts with it. */
  issuer: string;
  secrets: OAuthSecrets;
  kv: KvStore;
  /** The identity provider users log in at (the first of identity_providers). */
  loginProvider: IdentityProviderForLogin;
  /** True when `url` is a resource of this gateway: its origin, or /{server}/mcp of a configured server. */
  isResource: (url: string) => boolean;
  logger: Logger;
  /** Registrations the whole gateway accepts per minute (SVC_OAUTH_REGISTRATIONS_PER_MINUTE): each one is stored. */
  registrationsPerMinute: number;
  /** Registrations one client address may make per minute (SVC_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_MINUTE). */
  registrationsPerAddressPerMinute: number;
  /**
   * Every URL the library fetches goes through this (net/guarded-http.ts): https only, public addresses only unless
   * the operator trusted the origin, no redirects, bounded size and time. The only URLs it fetches are Client ID
   * Metadata Documents (client metadata naming other URLs to fetch is refused: client-metadata-policy.ts).
   */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

interface Account {
  groups: string[];
}

export class OAuthServer {
  readonly issuer: string;
  /** What the MCP route's token verifier needs to trust this server's tokens like a provider's. */
  readonly ownIssuer: OwnIssuerTrust;
  readonly #provider: Provider;
  readonly #providerCallback: (req: IncomingMessage, res: ServerResponse) => void;
  readonly #store: SealedStore;
  readonly #login: FederatedLogin;
  readonly #logger: Logger;
  readonly #registrations: RateLimiter;
  readonly #registrationLimit: RateLimitSettings;
  readonly #addressLimit: RateLimitSettings;
  readonly #accountTtl: number;
  readonly #knownClients: readonly KnownClient[];

  constructor(options: OAuthServerOptions) {
    const { config, secrets } = options;
    this.issuer = options.issuer;
    this.#logger = options.logger;
    this.#registrations = new RateLimiter(options.kv);
    this.#registrationLimit = { limit: options.registrationsPerMinute, windowSeconds: 60 };
    this.#addressLimit = { limit: options.registrationsPerAddressPerMinute, windowSeconds: 60 };
    this.#store = new SealedStore(options.kv, secrets.kvKey);
    this.#accountTtl = config.refresh_token_ttl;
    this.#knownClients = [...KNOWN_CLIENTS, ...config.consent.known_clients];
    if (config.idp_client_id === undefined || config.idp_client_secret === undefined) {
      throw new Error(
        "oauth_server needs idp_client_id and idp_client_secret to log users in at the identity provider",
      );
    }
    this.#login = new FederatedLogin({
      issuer: options.loginProvider.issuer,
      clientId: config.idp_client_id,
      clientSecret: config.idp_client_secret,
      redirectUri: `${this.issuer}/oauth/callback`,
    });
    const publicKeys = secrets.signingKeys.map(publicPart);
    this.ownIssuer = {
      name: OAUTH_SERVER_PROVIDER,
      issuer: this.issuer,
      keys: createLocalJWKSet({ keys: publicKeys as never }),
    };
    this.#provider = new Provider(this.issuer, this.#configuration(options));
    this.#provider.use(async (ctx, next) => {
      if (ctx.path === ROUTES.authorization && ctx.method === "GET" && ctx.query.scope === undefined) {
        ctx.query = { ...ctx.query, scope: GATEWAY_SCOPE };
      }
      await next();
    });
    // The provider sees each request as made to the issuer (handle() sets X-Forwarded-Proto and -Host from it): behind
    // a TLS-terminating proxy its cookies are then Secure, and no client header can change what it believes its URL is.
    this.#provider.proxy = true;
    this.#providerCallback = this.#provider.callback();
    this.#provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
      const clientId = ctx.oidc.client?.clientId;
      if (clientId === undefined) return;
      this.#keepClient(clientId, config.refresh_token_ttl).catch((error: unknown) =>
        this.#logger.warn("could not extend a client's registration", { error }),
      );
    });
  }

  #configuration(options: OAuthServerOptions): Configuration {
    const { config, secrets } = options;
    const signingAlg = secrets.signingKeys[0]?.alg as string;
    const cookieKey = Buffer.from(hkdfSync("sha256", secrets.kvKey, "", "svc-oauth-cookies", 32)).toString(
      "base64",
    );
    const store = this.#store;
    const metadataPolicy = {
      machineClients: config.registration.client_credentials || secrets.registrationToken !== undefined,
      redirectSchemes: config.registration.redirect_uri_schemes,
    };
    return {
      adapter: kvAdapterFactory(store, { clientTtlSeconds: config.registration.unused_client_ttl }),
      jwks: { keys: secrets.signingKeys },
      cookies: {
        keys: [cookieKey],
        // Names of their own: another application on the gateway's host (cookies ignore ports) may use the library's.
        names: {
          session: "svc_oauth_session",
          interaction: "svc_oauth_interaction",
          resume: "svc_oauth_resume",
        },
        // The interaction cookie must reach /oauth/callback, where the identity provider sends the browser back: the
        // library's default path (/oauth/interaction/<uid>) is never sent there. SameSite=Lax lets that cross-site
        // top-level GET carry it, and Secure follows the issuer's scheme (the library sets it on https requests).
        short: { httpOnly: true, sameSite: "lax", path: INTERACTION_COOKIE_PATH },
      },
      routes: ROUTES,
      fetch: options.fetch,
      // ID tokens (for clients asking for openid) signed with the gateway's key, whatever its algorithm.
      clientDefaults: {
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
        id_token_signed_response_alg: signingAlg,
      },
      clientAuthMethods: ["client_secret_basic", "client_secret_post", "none"],
      // handle() has already refused an origin the gateway's policy does not admit (cors.ts), for every client alike.
      clientBasedCORS: () => true,
      responseTypes: ["code"],
      // No offline_access: every client registered for refresh_token gets refresh tokens (issueRefreshToken), so the
      // scope would grant nothing; advertised, MCP clients ask for it and users are shown a permission that is not one.
      scopes: ["openid", GATEWAY_SCOPE],
      // PKCE with S256 (the only method the library allows by default) for every authorization request.
      pkce: { required: () => true },
      interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
      ttl: {
        AccessToken: config.token_ttl,
        ClientCredentials: config.token_ttl,
        AuthorizationCode: config.authorization_code_ttl,
        RefreshToken: config.refresh_token_ttl,
        Grant: config.refresh_token_ttl,
        Session: config.refresh_token_ttl,
        Interaction: LOGIN_TTL_SECONDS,
      },
      // Refresh tokens for every client registered for them (no offline_access ceremony), rotated on every use;
      // a rotated one presented again is reuse, and the library then revokes the whole grant.
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      // What the library would refuse after rotating is refused before it: a failed refresh leaves the token unspent.
      rotateRefreshToken: (ctx: KoaContextWithOIDC) => {
        assertRefreshTarget(ctx, options.isResource);
        return true;
      },
      expiresWithSession: async () => false,
      findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
      // The user's groups from their last login at the identity provider, carried into every access token.
      extraTokenClaims: async (_ctx, token) => {
        const { accountId, grantId } = token as { accountId?: string; grantId?: string };
        if (accountId === undefined) return {};
        const account = await store.get<Account>(store.keyOf("Account", accountId));
        // grant_id: the MCP route refuses the token once this grant is revoked (requireLiveGrant).
        return { groups: account?.groups ?? [], ...(grantId === undefined ? {} : { grant_id: grantId }) };
      },
      extraClientMetadata: {
        // Listed so the validator sees them; it checks the whole metadata once, on the one always present.
        properties: [...FETCHED_CLIENT_METADATA, "grant_types"],
        validator: (_ctx, key, _value, metadata) => {
          if (key !== "grant_types") return;
          const problem = clientMetadataProblem(metadata as Record<string, unknown>, metadataPolicy);
          if (problem !== undefined) throw new errors.InvalidClientMetadata(problem);
        },
      },
      features: {
        devInteractions: { enabled: false },
        // Client ID Metadata Documents: an https client_id is the URL of the client's metadata, fetched (guarded) and
        // checked like a registration (extraClientMetadata), cached by its Cache-Control within these bounds.
        clientIdMetadataDocument: {
          enabled: config.client_id_metadata_documents.enabled,
          ack: "draft-02",
          cacheDuration: { min: 60, max: 3600 },
        },
        clientCredentials: { enabled: true },
        revocation: { enabled: true },
        introspection: { enabled: false },
        userinfo: { enabled: false },
        registration: {
          enabled: config.registration.enabled,
          ...(secrets.registrationToken === undefined
            ? {}
            : { initialAccessToken: secrets.registrationToken }),
        },
        resourceIndicators: {
          enabled: true,
          // A client that names no resource gets a token for the whole gateway (every server it may use).
          defaultResource: () => this.issuer,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: KoaContextWithOIDC, resource: string) => {
            if (!options.isResource(resource)) {
              throw new errors.InvalidTarget(
                `resource ${resource} is not this gateway (${this.issuer}) nor one of its /{server}/mcp endpoints`,
              );
            }
            return {
              scope: GATEWAY_SCOPE,
              audience: resource,
              accessTokenTTL: config.token_ttl,
              accessTokenFormat: "jwt",
              jwt: { sign: { alg: signingAlg } },
            };
          },
        },
      },
      renderError: async (ctx, out) => {
        ctx.type = "text/plain; charset=utf-8";
        ctx.body = `${out.error}: ${out.error_description ?? ""}\n`;
      },
    } as Configuration;
  }

  /** True while grant `grantId` exists: not revoked, not expired. An arrow, so it can be handed around unbound. */
  readonly isGrantLive = async (grantId: string): Promise<boolean> =>
    (await this.#store.raw(this.#store.keyOf("Grant", grantId))) !== null;

  /**
   * Serves a request under /oauth/* or a discovery document, with a request id (the client's X-Request-Id when
   * plausible) on the answer and an access-log line for it. `originPolicy`: the gateway's (SVC_ALLOWED_ORIGINS), for
   * the endpoints browser-based clients call (cors.ts).
   */
  async handle(req: IncomingMessage, res: ServerResponse, originPolicy?: OriginPolicy): Promise<void> {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const started = performance.now();
    const method = req.method ?? "GET";
    const route = routeOf(req.url);
    res.setHeader("x-request-id", requestId);
    res.once("close", () => {
      this.#logger.info("request", {
        request_id: requestId,
        http_method: method,
        path: route,
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
      });
    });
    await requestContext.run({ requestId }, () => this.#handle(req, res, originPolicy));
  }

  async #handle(
    req: IncomingMessage,
    res: ServerResponse,
    originPolicy: OriginPolicy | undefined,
  ): Promise<void> {
    const url = new URL(req.url ?? "/", this.issuer);
    req.headers["x-forwarded-proto"] = url.protocol.slice(0, -1);
    req.headers["x-forwarded-host"] = url.host;
    const interaction = /^\/oauth\/interaction\/([^/]+)(\/confirm|\/abort)?$/.exec(url.pathname);
    try {
      if (clientEndpointCors(req, res, url.pathname, originPolicy) === "answered") return;
      if (interaction !== null) {
        const [, uid, action] = interaction as unknown as [string, string, string | undefined];
        if (action === undefined && req.method === "GET") return await this.#interaction(req, res, uid);
        if (action !== undefined && req.method === "POST") return await this.#decide(req, res, uid, action);
        return plain(res, 405, "method not allowed");
      }
      if (
        url.pathname === ROUTES.registration &&
        req.method === "POST" &&
        !(await this.#admitRegistration(req, res))
      ) {
        return;
      }
      if (url.pathname === "/oauth/callback" && req.method === "GET")
        return await this.#callback(req, res, url);
      // RFC 8414 metadata is the OIDC discovery document: same issuer, same members.
      if (url.pathname === "/.well-known/oauth-authorization-server")
        req.url = "/.well-known/openid-configuration";
      this.#providerCallback(req, res);
    } catch (error) {
      this.#logger.warn("oauth interaction failed", { path: routeOf(req.url), error });
      if (!res.headersSent) plain(res, 400, `The login could not be completed: ${describe(error)}`);
    }
  }

  /**
   * Every registration is a stored record, and open registration lets anyone register: one budget per client address
   * (one flooding machine cannot spend the gateway's), and one for the whole gateway (all replicas) bounds what
   * strangers can store together. Over either: 429, Retry-After. The store unreachable: refused too (the registration
   * could not be stored anyway). Only registration counts here: token requests, refreshes included, never do.
   */
  async #admitRegistration(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const address = {
      idp: OAUTH_SERVER_PROVIDER,
      sub: `registration:${addressBucket(req.socket.remoteAddress)}`,
    };
    const byAddress = await this.#registrations.check(address, this.#addressLimit);
    const result =
      byAddress.outcome === "admitted"
        ? await this.#registrations.check(REGISTRATION_BUDGET, this.#registrationLimit)
        : byAddress;
    if (result.outcome === "admitted") return true;
    const retry = result.outcome === "refused" ? result.retryAfterSeconds : 5;
    const description =
      result.outcome !== "refused"
        ? "client registration is unavailable (the store is unreachable)"
        : byAddress.outcome === "refused"
          ? `too many client registrations from this address (over ${this.#addressLimit.limit} a minute); retry in ${retry} s`
          : `too many client registrations on this gateway (over ${this.#registrationLimit.limit} a minute); retry in ${retry} s`;
    res.writeHead(result.outcome === "refused" ? 429 : 503, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "retry-after": String(retry),
    });
    res.end(JSON.stringify({ error: "temporarily_unavailable", error_description: description }));
    return false;
  }

  /**
   * A registered client lives as long as it is used: registration stores it for `unused_client_ttl`, and each token it
   * obtains keeps it for `refresh_token_ttl` more (so it never goes before a refresh token it holds). One rewrite per
   * client a day at most. Clients identified by a metadata document are not stored, so there is nothing to keep.
   */
  async #keepClient(clientId: string, refreshTtl: number): Promise<void> {
    const marker = this.#store.keyOf("Client:kept", clientId);
    if (!(await this.#store.setIfAbsent(marker, "1", CLIENT_KEEP_INTERVAL_SECONDS))) return;
    const key = this.#store.keyOf("Client", clientId);
    const record = await this.#store.get<unknown>(key);
    if (record !== undefined) await this.#store.set(key, record, refreshTtl + CLIENT_KEEP_INTERVAL_SECONDS);
  }

  /** The user arrives from /oauth/authorize: send them to log in, or ask for consent. */
  async #interaction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await this.#provider.interactionDetails(req, res);
    if (details.uid !== uid) return plain(res, 400, "this login belongs to another browser session");
    if (details.prompt.name === "login") {
      const { url, state, pending } = await this.#login.start(uid);
      await this.#store.set(this.#store.keyOf("FederatedLogin", state), pending, LOGIN_TTL_SECONDS);
      res.writeHead(303, { location: url, "cache-control": "no-store" });
      res.end();
      return;
    }
    const clientId = String(details.params.client_id);
    const client = await this.#provider.Client.find(clientId);
    const clientName = client?.clientName ?? clientId;
    const resources = details.params.resource;
    // What the user grants is what is missing from their grant, and only scopes this server knows.
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const scopes = [
      ...new Set([
        ...(missing.missingOIDCScope ?? []),
        ...Object.values(missing.missingResourceScopes ?? {}).flat(),
      ]),
    ];
    const destination = destinationOf(String(details.params.redirect_uri));
    const text = consentTextFor(req.headers["accept-language"]);
    const html = consentPage({
      uid,
      clientName,
      clientId,
      user: details.session?.accountId ?? "",
      scopes,
      resources: Array.isArray(resources) ? resources.map(String) : resources ? [String(resources)] : [],
      destination,
      warnings: consentWarnings(clientName, destination, this.#knownClients),
      text,
    });
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-language": text.lang,
      vary: "accept-language",
      "cache-control": "no-store",
      // No framing (clickjacking the Allow button), no script, nothing loaded. No form-action: browsers apply it to
      // the redirects after the POST too, and the last one goes to the client's redirect URI, another origin.
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    });
    res.end(html);
  }

  /** The identity provider sends the user back: check who they are, then continue the gateway's authorization. */
  async #callback(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const state = url.searchParams.get("state") ?? "";
    const key = this.#store.keyOf("FederatedLogin", state);
    const pending = state === "" ? undefined : await this.#store.get<PendingLogin>(key);
    if (pending === undefined)
      return plain(res, 400, "unknown or expired login (state); start again from the application");
    await this.#store.delete(key);
    // The callback must come to the browser that started this login (the interaction cookie), or anyone could
    // complete their own login into someone else's authorization.
    const details = await this.#provider.interactionDetails(req, res);
    if (details.uid !== pending.interactionUid)
      return plain(res, 400, "this login belongs to another browser session");
    const identity = await this.#login.finish(url, state, pending);
    await this.#store.set(
      this.#store.keyOf("Account", identity.sub),
      { groups: identity.groups },
      this.#accountTtl,
    );
    await this.#provider.interactionFinished(
      req,
      res,
      { login: { accountId: identity.sub } },
      { mergeWithLastSubmission: false },
    );
  }

  async #decide(req: IncomingMessage, res: ServerResponse, uid: string, action: string): Promise<void> {
    const details = await this.#provider.interactionDetails(req, res);
    if (details.uid !== uid || details.prompt.name !== "consent")
      return plain(res, 400, "nothing to consent to here");
    if (action === "/abort") {
      await this.#provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "the user denied the request" },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const accountId = details.session?.accountId as string;
    const clientId = String(details.params.client_id);
    const grant =
      (details.grantId === undefined ? undefined : await this.#provider.Grant.find(details.grantId)) ??
      new this.#provider.Grant({ accountId, clientId });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await this.#provider.interactionFinished(
      req,
      res,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  }
}

function publicPart(key: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest } = key as Record<string, unknown>;
  return rest as JWK;
}

/** The path for the access log: no query (codes, state), and no interaction id (it opens the user's login). */
function routeOf(url: string | undefined): string {
  const path = (url ?? "/").split("?")[0] as string;
  return path.replace(/^\/oauth\/(interaction|authorize)\/[^/]+/, "/oauth/$1/{uid}").slice(0, 200);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const description = (error as { error_description?: string }).error_description;
    return description ?? error.message;
  }
  return String(error);
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
  res.end(`${text}\n`);
}

/**
 * The budget a registration from `address` counts against: the IPv4 address (an IPv4-mapped one as IPv4), or an IPv6
 * address's /64 (one subscriber's network, where each machine can take as many addresses as it likes).
 */
function addressBucket(address: string | undefined): string {
  if (address === undefined || !ipaddr.isValid(address)) return address ?? "unknown";
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  return `${(parsed.toNormalizedString().split(":").slice(0, 4) as string[]).join(":")}::/64`;
}
