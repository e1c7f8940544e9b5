// The OAuth 2.0 client-credentials token (RFC 6749 section 4.4) a management API wants, kept until shortly before it
// expires so one is fetched per provider every few hours, not per user. One fetch at a time per provider.
import { ProviderError, providerJson } from "./provider-http.ts";

/** Renewed this long before `expires_in` runs out, so a token never expires between check and use. */
const RENEW_EARLY_MS = 60_000;

export interface ClientCredentialsRequest {
  tokenUrl: string;
  /** Form (application/x-www-form-urlencoded, as RFC 6749 says) or JSON (as Auth0's /oauth/token also accepts). */
  encoding: "form" | "json";
  params: Record<string, string>;
  timeoutMs: number;
  what: string;
}

export class ManagementToken {
  readonly #request: ClientCredentialsRequest;
  readonly #now: () => number;
  #token: { value: string; renewAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(request: ClientCredentialsRequest, now: () => number = Date.now) {
    this.#request = request;
    this.#now = now;
  }

  async get(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#token.renewAt) return this.#token.value;
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The API refused the token (401): fetch a new one next time. */
  forget(): void {
    this.#token = undefined;
  }

  async #fetch(): Promise<string> {
    const { tokenUrl, encoding, params, timeoutMs, what } = this.#request;
    const body = { grant_type: "client_credentials", ...params };
    const answer = (await providerJson(
      {
        method: "POST",
        url: tokenUrl,
        headers: {
          "content-type": encoding === "form" ? "application/x-www-form-urlencoded" : "application/json",
        },
        body: encoding === "form" ? new URLSearchParams(body).toString() : JSON.stringify(body),
        timeoutMs,
        what,
      },
      this.#now,
    )) as { access_token?: unknown; expires_in?: unknown };
    if (typeof answer.access_token !== "string" || answer.access_token === "") {
      throw new ProviderError(`${what}: the answer has no access_token`);
    }
    const lifetimeMs = typeof answer.expires_in === "number" ? answer.expires_in * 1000 : 3_600_000;
    this.#token = {
      value: answer.access_token,
      renewAt: this.#now() + Math.max(lifetimeMs - RENEW_EARLY_MS, 0),
    };
    return answer.access_token;
  }
}
