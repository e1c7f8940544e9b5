// Who is at the browser that opened a connect link: a sign-in at the user's identity provider, an OpenID Connect
// authorization-code flow with PKCE and a nonce, run by oauth4webapi (a certified relying-party library). The gateway
// is a confidential client there (identity_providers[].login_client_id/secret, else oauth_server's idp_client_id/secret
// for the first provider); a user already signed in at the provider is answered without a prompt (single sign-on).
// The ID token (iss, aud, exp and nonce checked) names the user by `sub`, and by `oid` at Microsoft Entra, whose `sub`
// differs per application while `oid` does not.
import * as oauth from "oauth4webapi";

export interface LoginClient {
  /** The provider's name in the config: the browser's user is that provider's user. */
  provider: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface BrowserIdentity {
  provider: string;
  sub: string;
  oid?: string;
}

/** What the return from the provider needs and must not take from the browser; kept server side under `state`. */
export interface PendingSignIn {
  codeVerifier: string;
  nonce: string;
}

export class BrowserLogin {
  readonly #login: LoginClient;
  readonly #redirectUri: string;
  readonly #client: oauth.Client;
  readonly #auth: oauth.ClientAuth;
  /** An http:// issuer is what the operator configured (a development provider); the library refuses it otherwise. */
  readonly #http: { [oauth.allowInsecureRequests]?: boolean };
  #server: Promise<oauth.AuthorizationServer> | undefined;

  constructor(login: LoginClient, redirectUri: string) {
    this.#login = login;
    this.#redirectUri = redirectUri;
    this.#client = { client_id: login.clientId };
    this.#auth = oauth.ClientSecretBasic(login.clientSecret);
    this.#http = login.issuer.startsWith("http:") ? { [oauth.allowInsecureRequests]: true } : {};
  }

  get provider(): string {
    return this.#login.provider;
  }

  /** Where to send the browser, and what to keep until it comes back. */
  async start(): Promise<{ url: string; state: string; pending: PendingSignIn }> {
    const server = await this.#authorizationServer();
    if (server.authorization_endpoint === undefined) {
      throw new Error(`the identity provider ${this.#login.issuer} has no authorization_endpoint`);
    }
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(server.authorization_endpoint);
    url.searchParams.set("client_id", this.#login.clientId);
    url.searchParams.set("redirect_uri", this.#redirectUri);
    url.searchParams.set("response_type", "code");
    // profile: Entra puts `oid` into an ID token only with it.
    url.searchParams.set("scope", "openid profile");
    url.searchParams.set("state", state);
    url.searchParams.set("nonce", nonce);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    return { url: url.href, state, pending: { codeVerifier, nonce } };
  }

  /** The user the provider vouches for; throws when anything in its answer does not check out. */
  async finish(returned: URL, state: string, pending: PendingSignIn): Promise<BrowserIdentity> {
    const server = await this.#authorizationServer();
    const params = oauth.validateAuthResponse(server, this.#client, returned, state);
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      this.#client,
      this.#auth,
      params,
      this.#redirectUri,
      pending.codeVerifier,
      this.#http,
    );
    const result = await oauth.processAuthorizationCodeResponse(server, this.#client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (claims === undefined) throw new Error("the identity provider returned no ID token");
    return {
      provider: this.#login.provider,
      sub: claims.sub,
      ...(typeof claims.oid === "string" ? { oid: claims.oid } : {}),
    };
  }

  /** The provider's metadata, fetched once; a failed fetch is retried on the next sign-in. */
  #authorizationServer(): Promise<oauth.AuthorizationServer> {
    this.#server ??= (async () => {
      const issuer = new URL(this.#login.issuer);
      const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...this.#http });
      return oauth.processDiscoveryResponse(issuer, response);
    })();
    this.#server.catch(() => {
      this.#server = undefined;
    });
    return this.#server;
  }
}
