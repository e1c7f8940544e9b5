// The connect link: the URL a user is handed to connect their vendor account, on the gateway's own origin. Opening it
// sends the browser to the vendor only once the gateway knows the browser's user is the user the link was made for
// (the MCP elicitation spec's "Phishing" rule: otherwise Mallory's link, opened by Alice signed in at the vendor,
// links Alice's vendor account to Mallory, and Mallory's calls then run as Alice at the vendor).
//
//   GET /oauth/upstream/connect/{link}
//     the browser's user is known (its gateway sign-in, below) → equal to the link's user: the link is used up, its
//     request bound to this browser, and the browser sent to the vendor; not equal: the link and its request are
//     destroyed, both users audited, and the browser told nothing of the other user.
//     unknown → the browser signs in at the user's identity provider first (single sign-on answers at once when the
//     user is signed in there), and comes back here.
//   GET /oauth/upstream/login      the identity provider's answer: checked (a sign-in started in another browser is
//                                  refused, or Mallory could sign Alice's browser in as Mallory), then remembered for
//                                  this browser for an hour, and back to the link.
//   GET /oauth/upstream/callback   (upstream-oauth.ts) the vendor's answer: refused from any browser but the one the
//                                  link sent there.
//
// A browser is recognised by one random cookie (HttpOnly, SameSite=Lax so the providers' redirects carry it back,
// Secure on an https gateway, scoped to /oauth/upstream); the gateway keeps only its hash.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuditLog } from "../audit/audit-log.ts";
import type { Logger } from "../log/logger.ts";
import type { SealedStore } from "../oauth/sealed-store.ts";
import { type BrowserIdentity, BrowserLogin, type LoginClient, type PendingSignIn } from "./browser-login.ts";
import { browserUrlProblem } from "./browser-url.ts";
import { describeFailure } from "./failure-text.ts";
import {
  PENDING_TTL_SECONDS,
  type PendingAuthorization,
  type PendingAuthorizations,
} from "./pending-authorizations.ts";

export const CONNECT_PATH = "/oauth/upstream/connect";
export const LOGIN_PATH = "/oauth/upstream/login";
const COOKIE_PATH = "/oauth/upstream";
export const BROWSER_COOKIE = "svc_upstream_browser";
/** How long a browser's gateway sign-in is remembered: later links of the same user open without the provider. */
const SIGN_IN_TTL_SECONDS = 3600;
/** The browser cookie outlives its sign-in, so a flow started just before the sign-in ends still finishes. */
const BROWSER_COOKIE_MAX_AGE = 24 * 3600;

/** What a route answers: a redirect, or a short page (text only). */
export type FlowAnswer =
  | { kind: "redirect"; location: string; cookies: string[] }
  | { kind: "page"; status: number; title: string; text: string; cookies: string[] };

export interface BrowserRequest {
  /** The request's Cookie header. */
  cookie: string | undefined;
  /** The TCP peer, for the audit. */
  source: string | undefined;
}

export interface ConnectFlowOptions {
  store: SealedStore;
  pending: PendingAuthorizations;
  /** SVC_PUBLIC_URL: the links, the sign-in's redirect URI and the cookies' Secure flag follow it. */
  publicUrl: string;
  /** The sign-in client for users of provider `provider` (a principal's idp), or undefined when there is none. */
  loginClientFor: (provider: string) => LoginClient | undefined;
  /** SVC_ALLOW_INSECURE_UPSTREAM_OAUTH: a vendor's authorization endpoint may be plain http on loopback. */
  development: boolean;
  audit: AuditLog;
  logger: Logger;
}

/** What the gateway keeps under a sign-in's `state` until the provider answers. */
interface SignIn extends PendingSignIn {
  link: string;
  browser: string;
  provider: string;
}

export class ConnectFlow {
  readonly #options: ConnectFlowOptions;
  /** One BrowserLogin per client (its metadata is fetched once); a reload changing the client builds another. */
  readonly #logins = new Map<string, BrowserLogin>();

  constructor(options: ConnectFlowOptions) {
    this.#options = options;
  }

  /** The URL to hand the user for link `link`. */
  linkUrl(link: string): string {
    return `${this.#options.publicUrl}${CONNECT_PATH}/${link}`;
  }

  /** Why users of `provider` cannot be handed a link (no sign-in to check them with), or undefined. */
  cannotConfirm(provider: string): string | undefined {
    if (this.#options.loginClientFor(provider) !== undefined) return undefined;
    return `the gateway cannot confirm who opens a connect link for users of identity provider '${provider}': set login_client_id and login_client_secret on that identity provider (a web client there with the redirect URI ${this.#options.publicUrl}${LOGIN_PATH})`;
  }

  /** GET /oauth/upstream/connect/{link}. */
  async open(link: string, request: BrowserRequest): Promise<FlowAnswer> {
    const browser = this.#browser(request);
    const pending = link.length > 100 ? undefined : await this.#options.pending.peek(link);
    if (pending === undefined) {
      return page(
        browser,
        404,
        "Link not valid",
        "This connect link is unknown, used or expired. Call the tool again in your MCP client for a new one.",
      );
    }
    const login = this.#loginFor(pending.provider);
    if (login === undefined) {
      return page(browser, 503, "Cannot connect", this.cannotConfirm(pending.provider) ?? "");
    }
    const signedIn = await this.#options.store.get<BrowserIdentity>(this.#signedInKey(browser.binding));
    if (signedIn !== undefined && signedIn.provider === login.provider) {
      return this.#decide(link, pending, signedIn, browser, request);
    }
    let started: Awaited<ReturnType<BrowserLogin["start"]>>;
    try {
      started = await login.start();
    } catch (error) {
      this.#options.logger.warn("connect link: the identity provider's sign-in could not start", {
        provider: login.provider,
        error: describeFailure(error),
      });
      return page(
        browser,
        502,
        "Cannot connect",
        `The sign-in at identity provider '${login.provider}' is unavailable; try again later.`,
      );
    }
    const signIn: SignIn = { ...started.pending, link, browser: browser.binding, provider: login.provider };
    await this.#options.store.set(this.#signInKey(started.state), signIn, PENDING_TTL_SECONDS);
    return { kind: "redirect", location: started.url, cookies: browser.cookies };
  }

  /** GET /oauth/upstream/login: the identity provider's answer to a sign-in. */
  async signInReturned(current: URL, request: BrowserRequest): Promise<FlowAnswer> {
    const browser = this.#browser(request);
    const state = current.searchParams.get("state") ?? "";
    const signIn =
      state === "" || state.length > 256
        ? undefined
        : await this.#options.store.take<SignIn>(this.#signInKey(state));
    if (signIn === undefined) {
      return page(
        browser,
        400,
        "Sign-in not valid",
        "This sign-in is unknown, used or expired. Open the connect link again.",
      );
    }
    if (!sameHash(signIn.browser, browser.binding)) {
      return page(
        browser,
        400,
        "Sign-in not valid",
        "This sign-in was started in another browser. Open the connect link again in this one.",
      );
    }
    const login = this.#loginFor(signIn.provider, true);
    if (login === undefined)
      return page(browser, 503, "Cannot connect", this.cannotConfirm(signIn.provider) ?? "");
    let identity: BrowserIdentity;
    try {
      identity = await login.finish(current, state, signIn);
    } catch (error) {
      this.#options.logger.warn("connect link: the sign-in at the identity provider failed", {
        provider: login.provider,
        error: describeFailure(error),
      });
      return page(
        browser,
        400,
        "Sign-in failed",
        `The identity provider '${login.provider}' did not sign you in. Open the connect link again.`,
      );
    }
    await this.#options.store.set(this.#signedInKey(browser.binding), identity, SIGN_IN_TTL_SECONDS);
    return { kind: "redirect", location: this.linkUrl(signIn.link), cookies: browser.cookies };
  }

  /** The hash the pending request was bound to when its link sent this browser to the vendor. */
  browserBinding(request: BrowserRequest): string | undefined {
    const id = readCookie(request.cookie, BROWSER_COOKIE);
    return id === undefined ? undefined : hashOf(id);
  }

  async #decide(
    link: string,
    pending: PendingAuthorization,
    identity: BrowserIdentity,
    browser: Browser,
    request: BrowserRequest,
  ): Promise<FlowAnswer> {
    const sameUser =
      pending.oid !== undefined && identity.oid !== undefined
        ? pending.oid === identity.oid
        : pending.subject === identity.sub;
    if (!sameUser) {
      await this.#options.pending.burn(link);
      const event = {
        server: pending.server,
        decision: "deny" as const,
        status: 403,
        source: request.source ?? null,
      };
      // Both sides: the user the link was made for (it may be a phishing attempt of theirs), and the one who opened it.
      this.#options.audit.record({
        kind: "upstream_oauth",
        reason: "connect_link_opened_by_other_user",
        subject: pending.subject,
        provider: pending.provider,
        ...event,
      });
      this.#options.audit.record({
        kind: "upstream_oauth",
        reason: "connect_link_of_other_user_refused",
        subject: identity.sub,
        provider: identity.provider,
        ...event,
      });
      return page(
        browser,
        403,
        "Not connected",
        "This link was made for another user than the one signed in on this browser, so nothing was connected and the link no longer works. If you did not expect a link, ignore it; otherwise call the tool again in your own MCP client.",
      );
    }
    const problem = browserUrlProblem(pending.vendorUrl, this.#options.development);
    if (problem !== undefined) {
      await this.#options.pending.burn(link);
      return page(
        browser,
        502,
        "Cannot connect",
        `The vendor's authorization endpoint of '${pending.server}' is not used: ${problem}.`,
      );
    }
    const released = await this.#options.pending.release(link, browser.binding);
    if (released === undefined) {
      return page(
        browser,
        404,
        "Link not valid",
        "This connect link was used a moment ago. Call the tool again in your MCP client for a new one.",
      );
    }
    this.#options.audit.record({
      kind: "upstream_oauth",
      reason: "connect_link_opened",
      server: pending.server,
      subject: pending.subject,
      provider: pending.provider,
      source: request.source ?? null,
    });
    return { kind: "redirect", location: released.vendorUrl, cookies: browser.cookies };
  }

  /** The BrowserLogin for users of principal provider `provider`; by client name when `byLoginProvider`. */
  #loginFor(provider: string, byLoginProvider = false): BrowserLogin | undefined {
    const client = byLoginProvider ? this.#clientNamed(provider) : this.#options.loginClientFor(provider);
    if (client === undefined) return undefined;
    const key = JSON.stringify([client.provider, client.issuer, client.clientId, client.clientSecret]);
    let login = this.#logins.get(key);
    if (login === undefined) {
      if (this.#logins.size >= 64) this.#logins.clear();
      login = new BrowserLogin(client, `${this.#options.publicUrl}${LOGIN_PATH}`);
      this.#logins.set(key, login);
    }
    return login;
  }

  /** The client whose sign-in answers for identity provider `name` (a sign-in records the provider it went to). */
  #clientNamed(name: string): LoginClient | undefined {
    const client = this.#options.loginClientFor(name);
    return client?.provider === name ? client : undefined;
  }

  #browser(request: BrowserRequest): Browser {
    const existing = readCookie(request.cookie, BROWSER_COOKIE);
    if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) {
      return { binding: hashOf(existing), cookies: [] };
    }
    const id = randomBytes(32).toString("base64url");
    const secure = this.#options.publicUrl.startsWith("https:") ? "; Secure" : "";
    return {
      binding: hashOf(id),
      cookies: [
        `${BROWSER_COOKIE}=${id}; Path=${COOKIE_PATH}; Max-Age=${BROWSER_COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax${secure}`,
      ],
    };
  }

  #signInKey(state: string): string {
    return this.#options.store.keyOf("upstream-signin", state);
  }

  #signedInKey(binding: string): string {
    return this.#options.store.keyOf("upstream-browser", binding);
  }
}

interface Browser {
  /** The hash of the browser's cookie: what the gateway keeps. */
  binding: string;
  /** Set-Cookie values to send (the cookie, when the browser had none). */
  cookies: string[];
}

function page(browser: Browser, status: number, title: string, text: string): FlowAnswer {
  return { kind: "page", status, title, text, cookies: browser.cookies };
}

function hashOf(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** Constant-time equality of two hashes. */
export function sameHash(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
