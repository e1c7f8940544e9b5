// The gateway as an OAuth client of its third-party upstreams (upstream_auth_type oauth). For each call it finds the
// token to send: the user's own for this server (obtained once through the vendor's consent screen, refreshed before
// it expires), or, for a machine caller, a server-wide client_credentials token. Without one the caller gets a connect
// link on the gateway's own origin (upstream_authorization_required), which sends the browser on to the vendor once it
// is the caller's (connect-flow.ts); the vendor sends the browser back to the gateway's callback, which completes the
// flow. The client's own token never goes upstream (proxy/headers.ts drops it).
// Protocol steps are oauth4webapi's; this file decides when each happens. Never a token value in a log or an event.
import * as oauth from "oauth4webapi";
import type { AuditLog } from "../audit/audit-log.ts";
import type { ServerConfig } from "../config/index.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import type { KvStore } from "../kv/index.ts";
import type { Logger } from "../log/logger.ts";
import type { FetchFunction } from "../net/guarded-http.ts";
import { SealedStore } from "../oauth/sealed-store.ts";
import type { LoginClient } from "./browser-login.ts";
import { browserUrlProblem } from "./browser-url.ts";
import type { BearerChallenge } from "./challenge.ts";
import {
  type ClientKind,
  ClientRegistrations,
  clientAuthOf,
  type UpstreamClient,
} from "./client-registrations.ts";
import { type BrowserRequest, ConnectFlow, sameHash } from "./connect-flow.ts";
import { DiscoveryError, type UpstreamAuthorization, UpstreamDiscovery } from "./discovery.ts";
import { describeFailure } from "./failure-text.ts";
import { type OAuthHttpOptions, oauthHttp } from "./http-options.ts";
import { PENDING_TTL_SECONDS, PendingAuthorizations } from "./pending-authorizations.ts";
import { Renewals } from "./renewals.ts";
import { MACHINE_OWNER, type UpstreamToken, UpstreamTokens } from "./upstream-tokens.ts";

/** The vendor sends the user's browser back here: under the gateway's OAuth routes, with or without oauth_server. */
export const CALLBACK_PATH = "/oauth/upstream/callback";

/** A token this close to its expiry is refreshed before use, so it does not expire on its way to the upstream. */
export const REFRESH_MARGIN_MS = 60_000;

export interface UpstreamOAuthOptions {
  kv: KvStore;
  /** SVC_OAUTH_KV_KEY (32 bytes), sealing every record; undefined: oauth upstreams fail closed, naming it. */
  kvKey: Buffer | undefined;
  /** SVC_PUBLIC_URL's origin: the callback URL registered at vendors must not follow a request's Host header. */
  publicUrl: string | undefined;
  audit: AuditLog;
  logger: Logger;
  /** The servers of the config in force (a callback belongs to a server that must still be an oauth one). */
  servers: () => readonly ServerConfig[];
  /** Every request towards upstreams and their authorization servers: the guarded fetch (net/guarded-http.ts). */
  fetch: FetchFunction;
  /** The sign-in that confirms who opens a connect link, for users of provider `provider` (a principal's idp). */
  loginClientFor: (provider: string) => LoginClient | undefined;
  /** SVC_ALLOW_INSECURE_UPSTREAM_OAUTH: vendors on plain-http loopback are allowed (development). */
  development: boolean;
  now?: () => number;
}

/** Who a call is made for. */
export interface UpstreamCaller {
  principal: Principal;
  /** principalKey(principal). */
  owner: string;
  requestId?: string;
}

export interface UpstreamConnection {
  server: string;
  /** ISO 8601. */
  connected_at: string;
  /** ISO 8601; null when the vendor stated no expiry. */
  expires_at: string | null;
  scope: string;
  /** True when the gateway can renew the token without the user (it holds a refresh token). */
  refreshable: boolean;
}

/** A callback the gateway refuses: the message names what is wrong, never a token. */
export class AuthorizationCallbackError extends Error {
  override readonly name = "AuthorizationCallbackError";
  readonly status: 400 | 502;
  constructor(status: 400 | 502, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

export class UpstreamOAuth {
  readonly #discovery: UpstreamDiscovery;
  readonly #registrations: ClientRegistrations | undefined;
  readonly #tokens: UpstreamTokens | undefined;
  readonly #pending: PendingAuthorizations | undefined;
  readonly #renewals: Renewals | undefined;
  readonly #connect: ConnectFlow | undefined;
  readonly #development: boolean;
  readonly #problem: string | undefined;
  readonly #audit: AuditLog;
  readonly #logger: Logger;
  readonly #servers: () => readonly ServerConfig[];
  readonly #http: OAuthHttpOptions;
  readonly #now: () => number;

  constructor(options: UpstreamOAuthOptions) {
    this.#audit = options.audit;
    this.#logger = options.logger;
    this.#servers = options.servers;
    this.#http = oauthHttp(options.fetch);
    this.#development = options.development;
    this.#now = options.now ?? Date.now;
    this.#discovery = new UpstreamDiscovery(options.fetch, this.#now);
    const missing = [
      options.kvKey === undefined &&
        "SVC_OAUTH_KV_KEY (32 bytes, base64: it seals the upstream tokens in the KV store)",
      options.publicUrl === undefined &&
        "SVC_PUBLIC_URL (the gateway's public URL: vendors send users back to its callback)",
    ].filter((item): item is string => typeof item === "string");
    if (options.kvKey === undefined || options.publicUrl === undefined) {
      this.#problem = `upstream_auth_type oauth needs ${missing.join(" and ")}`;
      return;
    }
    const store = new SealedStore(options.kv, options.kvKey);
    this.#registrations = new ClientRegistrations(
      store,
      `${options.publicUrl}${CALLBACK_PATH}`,
      options.fetch,
    );
    this.#tokens = new UpstreamTokens(store, this.#now);
    this.#pending = new PendingAuthorizations(store);
    this.#renewals = new Renewals(store, this.#tokens);
    this.#connect = new ConnectFlow({
      store,
      pending: this.#pending,
      publicUrl: options.publicUrl,
      loginClientFor: options.loginClientFor,
      development: options.development,
      audit: options.audit,
      logger: options.logger,
    });
  }

  /** The connect link's routes (undefined when the key or the public URL is missing: every link fails closed). */
  get connectFlow(): ConnectFlow | undefined {
    return this.#connect;
  }

  /**
   * The headers that authenticate this call to `server`: the caller's upstream token (refreshed when close to expiry;
   * for a machine, the server-wide client_credentials token, fetched when missing). Throws
   * upstream_authorization_required (with the URL) when the user must consent first.
   */
  async authorizationHeaders(server: ServerConfig, caller: UpstreamCaller): Promise<Record<string, string>> {
    const parts = this.#parts(server);
    const owner = ownerOf(caller);
    const stored = await parts.tokens.get(server.name, owner);
    let token = stored;
    if (token !== undefined && this.#expiresSoon(token)) {
      token = caller.principal.machine ? undefined : await this.#refresh(server, caller, token);
    }
    if (token === undefined && caller.principal.machine)
      token = await this.#clientCredentials(server, caller, stored);
    if (token === undefined) throw await this.#authorizationRequired(server, caller, undefined);
    return { authorization: `Bearer ${token.access_token}` };
  }

  /**
   * The upstream refused the token just sent (401, or 403 with a challenge). `invalid_token` (or a bare 401): one
   * refresh (a machine: a new token), whose headers the caller retries with once; after that, or when nothing can be
   * renewed, the user goes through consent again. `insufficient_scope`: consent again for the scopes it names (step-up).
   */
  async afterRejection(
    server: ServerConfig,
    caller: UpstreamCaller,
    status: number,
    challenge: BearerChallenge,
    retried: boolean,
  ): Promise<Record<string, string>> {
    const parts = this.#parts(server);
    const owner = ownerOf(caller);
    const token = await parts.tokens.get(server.name, owner);
    if (challenge.error === "insufficient_scope") {
      const wanted = [...new Set([...(token?.scope.split(" ") ?? []), ...challenge.scopes])].filter(Boolean);
      if (caller.principal.machine) {
        this.#record("step_up_failed", server, caller, "deny");
        throw new GatewayError(
          "upstream_oauth_failed",
          `Upstream server '${server.name}' wants scopes the gateway's machine token lacks (${challenge.scopes.join(" ") || "unnamed"}); grant them to the gateway's client at its authorization server, or set scopes_override`,
          { server: server.name },
        );
      }
      throw await this.#authorizationRequired(server, caller, wanted.join(" "));
    }
    if (status !== 401) {
      throw new GatewayError(
        "upstream_forbidden",
        `Upstream server '${server.name}' refused the request (it answered HTTP 403)`,
        {
          server: server.name,
        },
      );
    }
    if (!retried) {
      if (caller.principal.machine) {
        const fresh = await this.#clientCredentials(server, caller, token);
        return { authorization: `Bearer ${fresh.access_token}` };
      }
      if (token !== undefined) {
        const refreshed = await this.#refresh(server, caller, token);
        if (refreshed !== undefined) return { authorization: `Bearer ${refreshed.access_token}` };
      }
    }
    if (caller.principal.machine) {
      this.#record("token_refused", server, caller, "deny");
      throw new GatewayError(
        "upstream_auth_required",
        `Upstream server '${server.name}' refused the gateway's client_credentials token (HTTP 401)`,
        { server: server.name },
      );
    }
    // The vendor no longer honours this user's grant (revoked, or refused after a refresh): consent again.
    if (token !== undefined) {
      await parts.tokens.delete(server.name, owner);
      this.#record("token_refused", server, caller, "deny");
    }
    throw await this.#authorizationRequired(server, caller, undefined);
  }

  /**
   * The vendor's redirect back to the gateway: exchanges the code and stores the user's token. Only from the browser
   * the connect link sent to the vendor (`browser`): a code arriving in another browser is someone else's consent.
   */
  async completeAuthorization(current: URL, browser: BrowserRequest): Promise<{ server: string }> {
    if (this.#problem !== undefined) throw new AuthorizationCallbackError(502, this.#problem);
    const pending = this.#pending as PendingAuthorizations;
    const state = current.searchParams.get("state");
    if (state === null || state === "" || state.length > 256) {
      throw new AuthorizationCallbackError(400, "The authorization response has no state parameter");
    }
    const request = await pending.take(state);
    if (request === undefined) {
      throw new AuthorizationCallbackError(
        400,
        "Unknown, expired or already used state: start again from the MCP client (call the tool again for a new link)",
      );
    }
    const caller = {
      principal: { sub: request.subject, idp: request.provider, groups: [], scopes: [], expiresAt: 0 },
      owner: request.owner,
    };
    if (!sameHash(request.browserBinding, this.#connect?.browserBinding(browser))) {
      this.#audit.record({
        kind: "upstream_oauth",
        reason: "callback_from_other_browser",
        server: request.server,
        subject: request.subject,
        provider: request.provider,
        source: browser.source ?? null,
        decision: "deny",
      });
      throw new AuthorizationCallbackError(
        400,
        "This authorization was finished in another browser than the one its connect link was opened in, so nothing was connected. Call the tool again in your MCP client for a new link.",
      );
    }
    const server = this.#servers().find((s) => s.name === request.server && s.upstream_auth_type === "oauth");
    if (server === undefined) {
      throw new AuthorizationCallbackError(400, `Server '${request.server}' no longer uses upstream OAuth`);
    }
    let target: UpstreamAuthorization | undefined;
    try {
      target = await this.#discovery.discover(server);
      if (target.as.issuer !== request.issuer) {
        throw new AuthorizationCallbackError(
          400,
          `Server '${server.name}' changed authorization server; start again`,
        );
      }
      const client = await this.#client(server, target, "user");
      if (client.client_id !== request.clientId) {
        throw new AuthorizationCallbackError(
          400,
          `The gateway's client at '${server.name}' changed; start again`,
        );
      }
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse(target.as, client, current, state);
      } catch (error) {
        const denied = error instanceof oauth.AuthorizationResponseError ? ` (${error.error})` : "";
        throw new AuthorizationCallbackError(
          400,
          `The authorization server of '${server.name}' did not authorize the gateway${denied}`,
          { cause: error },
        );
      }
      const response = await oauth.authorizationCodeGrantRequest(
        target.as,
        client,
        clientAuthOf(client),
        params,
        (this.#registrations as ClientRegistrations).redirectUri,
        request.codeVerifier,
        { additionalParameters: { resource: request.resource }, ...this.#http },
      );
      const result = await oauth.processAuthorizationCodeResponse(target.as, client, response);
      const now = this.#now();
      await this.#parts(server).tokens.put(server.name, request.owner, {
        ...tokenFields(result, now, request.scope),
        issuer: target.as.issuer,
        client_id: client.client_id,
        connected_at: now,
      });
      this.#record("connected", server, caller, "allow");
      return { server: server.name };
    } catch (error) {
      this.#record("connect_failed", server, caller, "deny");
      if (target !== undefined) await this.#forgetUnknownClient(server, target, "user", error);
      if (error instanceof AuthorizationCallbackError) throw error;
      throw new AuthorizationCallbackError(
        502,
        `Connecting '${server.name}' failed at its authorization server: ${describeFailure(error)}`,
        { cause: error },
      );
    }
  }

  /** The caller's connections: one per oauth server of the config for which the gateway holds a token. */
  async connections(caller: UpstreamCaller): Promise<UpstreamConnection[]> {
    if (this.#tokens === undefined) return [];
    const found: UpstreamConnection[] = [];
    for (const server of this.#servers()) {
      if (server.upstream_auth_type !== "oauth") continue;
      const token = await this.#tokens.get(server.name, ownerOf(caller));
      if (token === undefined) continue;
      found.push({
        server: server.name,
        connected_at: new Date(token.connected_at).toISOString(),
        expires_at: token.expires_at === undefined ? null : new Date(token.expires_at).toISOString(),
        scope: token.scope,
        refreshable: token.refresh_token !== undefined,
      });
    }
    return found;
  }

  /**
   * Forgets the caller's token for `server` after asking the vendor to revoke it (RFC 7009, when it offers
   * revocation: best effort, the gateway forgets it either way). False when there was no connection.
   */
  async revoke(serverName: string, caller: UpstreamCaller): Promise<boolean> {
    const server = this.#servers().find((s) => s.name === serverName && s.upstream_auth_type === "oauth");
    if (server === undefined || this.#tokens === undefined) return false;
    const owner = ownerOf(caller);
    const token = await this.#tokens.get(server.name, owner);
    if (token === undefined) return false;
    await this.#tokens.delete(server.name, owner);
    try {
      const target = await this.#discovery.discover(server);
      if (target.as.revocation_endpoint !== undefined && target.as.issuer === token.issuer) {
        const client = await this.#client(server, target, caller.principal.machine ? "machine" : "user");
        const response = await oauth.revocationRequest(
          target.as,
          client,
          clientAuthOf(client),
          token.refresh_token ?? token.access_token,
          this.#http,
        );
        await oauth.processRevocationResponse(response);
      }
    } catch (error) {
      this.#logger.warn("upstream token revocation at the vendor failed; the gateway forgot the token", {
        server: server.name,
        error: describeFailure(error),
      });
    }
    this.#record("revoked", server, caller, "allow");
    return true;
  }

  #parts(server: ServerConfig): { tokens: UpstreamTokens; pending: PendingAuthorizations } {
    if (this.#problem !== undefined) {
      throw new GatewayError("upstream_oauth_failed", `Upstream server '${server.name}': ${this.#problem}`, {
        server: server.name,
      });
    }
    return { tokens: this.#tokens as UpstreamTokens, pending: this.#pending as PendingAuthorizations };
  }

  #expiresSoon(token: UpstreamToken): boolean {
    return token.expires_at !== undefined && token.expires_at - this.#now() < REFRESH_MARGIN_MS;
  }

  async #target(server: ServerConfig): Promise<UpstreamAuthorization> {
    try {
      return await this.#discovery.discover(server);
    } catch (error) {
      throw oauthFailure(server, error);
    }
  }

  async #client(
    server: ServerConfig,
    target: UpstreamAuthorization,
    kind: ClientKind,
  ): Promise<UpstreamClient> {
    return (this.#registrations as ClientRegistrations).clientFor(server, target.as, kind);
  }

  /** A new access token from the refresh token, one renewal at a time; undefined when the vendor refuses it. */
  #refresh(
    server: ServerConfig,
    caller: UpstreamCaller,
    token: UpstreamToken,
  ): Promise<UpstreamToken | undefined> {
    return (this.#renewals as Renewals).once(server.name, ownerOf(caller), token, () =>
      this.#refreshNow(server, caller, token),
    );
  }

  /** The refresh itself; undefined (and the token forgotten) when the vendor refuses it. */
  async #refreshNow(
    server: ServerConfig,
    caller: UpstreamCaller,
    token: UpstreamToken,
  ): Promise<UpstreamToken | undefined> {
    const tokens = this.#parts(server).tokens;
    const owner = ownerOf(caller);
    if (token.refresh_token === undefined) {
      await tokens.delete(server.name, owner);
      return undefined;
    }
    const target = await this.#target(server);
    let client: UpstreamClient;
    try {
      client = await this.#client(server, target, "user");
    } catch (error) {
      throw oauthFailure(server, error);
    }
    if (target.as.issuer !== token.issuer || client.client_id !== token.client_id) {
      await tokens.delete(server.name, owner);
      return undefined;
    }
    try {
      const response = await oauth.refreshTokenGrantRequest(
        target.as,
        client,
        clientAuthOf(client),
        token.refresh_token,
        { additionalParameters: { resource: target.resource }, ...this.#http },
      );
      const result = await oauth.processRefreshTokenResponse(target.as, client, response);
      const now = this.#now();
      const refreshed: UpstreamToken = {
        ...token,
        ...tokenFields(result, now, token.scope),
        refresh_token: result.refresh_token ?? token.refresh_token,
        refreshed_at: now,
      };
      await tokens.put(server.name, owner, refreshed);
      this.#record("refreshed", server, caller, "allow");
      return refreshed;
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError && error.error === "invalid_grant") {
        // Another replica may have rotated this refresh token a moment ago: its result is as good as ours.
        const current = await tokens.get(server.name, owner);
        if (
          current !== undefined &&
          current.refresh_token !== token.refresh_token &&
          !this.#expiresSoon(current)
        ) {
          return current;
        }
        await tokens.delete(server.name, owner);
        this.#record("refresh_failed", server, caller, "deny");
        return undefined;
      }
      this.#record("refresh_failed", server, caller, "deny");
      await this.#forgetUnknownClient(server, target, "user", error);
      throw oauthFailure(server, error);
    }
  }

  /** The vendor no longer knows the registered client (invalid_client): the next attempt registers anew. */
  async #forgetUnknownClient(
    server: ServerConfig,
    target: UpstreamAuthorization,
    kind: ClientKind,
    error: unknown,
  ): Promise<void> {
    if (error instanceof oauth.ResponseBodyError && error.error === "invalid_client") {
      await (this.#registrations as ClientRegistrations).forget(server, target.as, kind);
    }
  }

  /** The server-wide machine token (client_credentials), one renewal at a time, stored for every replica to use. */
  async #clientCredentials(
    server: ServerConfig,
    caller: UpstreamCaller,
    stale: UpstreamToken | undefined,
  ): Promise<UpstreamToken> {
    const token = await (this.#renewals as Renewals).once(server.name, MACHINE_OWNER, stale, () =>
      this.#clientCredentialsNow(server, caller),
    );
    // The renewal of another replica ended without a token: this one's own attempt threw, so this is that replica's.
    if (token === undefined) {
      throw new GatewayError(
        "upstream_oauth_failed",
        `Upstream server '${server.name}': no machine token could be obtained`,
        {
          server: server.name,
        },
      );
    }
    return token;
  }

  async #clientCredentialsNow(server: ServerConfig, caller: UpstreamCaller): Promise<UpstreamToken> {
    const target = await this.#target(server);
    if (
      target.as.grant_types_supported !== undefined &&
      !target.as.grant_types_supported.includes("client_credentials")
    ) {
      this.#record("client_credentials_unsupported", server, caller, "deny");
      throw new GatewayError(
        "upstream_oauth_failed",
        `Upstream server '${server.name}' is for users only: its authorization server ${target.as.issuer} does not offer client_credentials, so machine callers cannot use it`,
        { server: server.name },
      );
    }
    try {
      const client = await this.#client(server, target, "machine");
      const parameters: Record<string, string> = { resource: target.resource };
      if (target.scopes.length > 0) parameters.scope = target.scopes.join(" ");
      const response = await oauth.clientCredentialsGrantRequest(
        target.as,
        client,
        clientAuthOf(client),
        parameters,
        this.#http,
      );
      const result = await oauth.processClientCredentialsResponse(target.as, client, response);
      const now = this.#now();
      const token: UpstreamToken = {
        ...tokenFields(result, now, target.scopes.join(" ")),
        issuer: target.as.issuer,
        client_id: client.client_id,
        connected_at: now,
      };
      delete token.refresh_token; // client_credentials needs none: a new token is one request away
      await this.#parts(server).tokens.put(server.name, MACHINE_OWNER, token);
      this.#record("connected", server, caller, "allow");
      return token;
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      this.#record("connect_failed", server, caller, "deny");
      await this.#forgetUnknownClient(server, target, "machine", error);
      throw oauthFailure(server, error);
    }
  }

  /** The error that sends the user to the vendor: a pending authorization request and its URL. */
  async #authorizationRequired(
    server: ServerConfig,
    caller: UpstreamCaller,
    stepUpScope: string | undefined,
  ): Promise<GatewayError> {
    const { pending } = this.#parts(server);
    const target = await this.#target(server);
    if (target.as.authorization_endpoint === undefined) {
      return new GatewayError(
        "upstream_oauth_failed",
        `Upstream server '${server.name}': its authorization server ${target.as.issuer} has no authorization endpoint, so users cannot connect`,
        { server: server.name },
      );
    }
    const unusable = browserUrlProblem(target.as.authorization_endpoint, this.#development);
    if (unusable !== undefined) {
      return new GatewayError(
        "upstream_oauth_failed",
        `Upstream server '${server.name}': its authorization server ${target.as.issuer} names an authorization endpoint users cannot be sent to (${unusable})`,
        { server: server.name },
      );
    }
    const connect = this.#connect as ConnectFlow;
    const unconfirmable = connect.cannotConfirm(caller.principal.idp);
    if (unconfirmable !== undefined) {
      return new GatewayError(
        "upstream_oauth_failed",
        `Upstream server '${server.name}' needs you to connect your account, but ${unconfirmable}`,
        {
          server: server.name,
        },
      );
    }
    let client: UpstreamClient;
    try {
      client = await this.#client(server, target, "user");
    } catch (error) {
      return oauthFailure(server, error);
    }
    const scope = stepUpScope ?? target.scopes.join(" ");
    let outstanding = await pending.outstanding(server.name, caller.owner, scope);
    if (outstanding === undefined) {
      const state = oauth.generateRandomState();
      const codeVerifier = oauth.generateRandomCodeVerifier();
      const authorization = new URL(target.as.authorization_endpoint);
      const query = authorization.searchParams;
      query.set("response_type", "code");
      query.set("client_id", client.client_id);
      query.set("redirect_uri", (this.#registrations as ClientRegistrations).redirectUri);
      query.set("state", state);
      query.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
      query.set("code_challenge_method", "S256");
      query.set("resource", target.resource);
      if (scope !== "") query.set("scope", scope);
      const elicitationId = oauth.generateRandomState();
      const link = await pending.add(state, {
        server: server.name,
        owner: caller.owner,
        subject: caller.principal.sub,
        provider: caller.principal.idp,
        ...(caller.principal.oid === undefined ? {} : { oid: caller.principal.oid }),
        elicitationId,
        vendorUrl: authorization.href,
        codeVerifier,
        clientId: client.client_id,
        issuer: target.as.issuer,
        resource: target.resource,
        scope,
        created_at: this.#now(),
      });
      outstanding = { link, elicitationId };
      this.#record(
        stepUpScope === undefined ? "authorization_requested" : "step_up_requested",
        server,
        caller,
        null,
      );
    }
    const url = connect.linkUrl(outstanding.link);
    const needs = stepUpScope === undefined ? "" : ` (it needs the scopes ${stepUpScope})`;
    const message = `Connect your account at '${server.name}' first: open the link, sign in, consent, then retry${needs}`;
    // The URL in the text too: a client without URL elicitation may show nothing but the message.
    const text = `Connect your account at '${server.name}' first${needs}: open ${url} , consent, then retry`;
    return new GatewayError("upstream_authorization_required", text, {
      server: server.name,
      data: {
        authorization_url: url,
        expires_in: PENDING_TTL_SECONDS,
        ...(stepUpScope === undefined ? {} : { scope: stepUpScope }),
        // MCP 2025-11-25 URL-mode elicitation, for clients that act on -32042 themselves.
        elicitations: [{ mode: "url", elicitationId: outstanding.elicitationId, url, message }],
      },
    });
  }

  #record(
    reason: string,
    server: ServerConfig,
    caller: UpstreamCaller,
    decision: "allow" | "deny" | null,
  ): void {
    this.#audit.record({
      kind: "upstream_oauth",
      reason,
      server: server.name,
      request_id: caller.requestId ?? null,
      subject: caller.principal.sub,
      provider: caller.principal.idp,
      decision,
    });
  }
}

function ownerOf(caller: UpstreamCaller): string {
  return caller.principal.machine ? MACHINE_OWNER : caller.owner;
}

function tokenFields(
  result: oauth.TokenEndpointResponse,
  now: number,
  requestedScope: string,
): Pick<UpstreamToken, "access_token" | "refresh_token" | "expires_at" | "scope"> {
  return {
    access_token: result.access_token,
    ...(result.refresh_token === undefined ? {} : { refresh_token: result.refresh_token }),
    ...(result.expires_in === undefined ? {} : { expires_at: now + result.expires_in * 1000 }),
    scope: result.scope ?? requestedScope,
  };
}

function oauthFailure(server: ServerConfig, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  const message =
    error instanceof DiscoveryError
      ? error.message
      : `Upstream server '${server.name}': its authorization server failed: ${describeFailure(error)}`;
  return new GatewayError("upstream_oauth_failed", message, { server: server.name, cause: error });
}
