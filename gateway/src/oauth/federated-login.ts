// The user's login at the company identity provider: an OIDC authorization-code flow with PKCE and a nonce, run by
// oauth4webapi (a certified relying-party library). The gateway is a confidential client there (idp_client_id /
// idp_client_secret); the ID token (from the token endpoint, checked for iss, aud, exp and nonce) says who the user
// is and which groups they are in, by the same claim rules as a bearer token at the MCP route.
import * as oauth from "oauth4webapi";
import { groupsFromClaims } from "../identity/principal.ts";

export interface FederatedIdentity {
  sub: string;
  groups: string[];
}

/** What the callback needs to finish what the redirect started; kept server side under `state`. */
export interface PendingLogin {
  interactionUid: string;
  codeVerifier: string;
  nonce: string;
}

export interface FederatedLoginOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The gateway's callback URL, registered at the identity provider. */
  redirectUri: string;
}

export class FederatedLogin {
  readonly #options: FederatedLoginOptions;
  readonly #client: oauth.Client;
  readonly #auth: oauth.ClientAuth;
  readonly #http: { [oauth.allowInsecureRequests]?: boolean };
  #server: Promise<oauth.AuthorizationServer> | undefined;

  constructor(options: FederatedLoginOptions) {
    this.#options = options;
    this.#client = { client_id: options.clientId };
    this.#auth = oauth.ClientSecretBasic(options.clientSecret);
    // An http:// issuer is what the operator configured (a development provider); the library refuses it otherwise.
    this.#http = options.issuer.startsWith("http:") ? { [oauth.allowInsecureRequests]: true } : {};
  }

  /** The provider's metadata, fetched once; a failed fetch is retried on the next login. */
  #authorizationServer(): Promise<oauth.AuthorizationServer> {
    this.#server ??= (async () => {
      const issuer = new URL(this.#options.issuer);
      const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...this.#http });
      return oauth.processDiscoveryResponse(issuer, response);
    })();
    this.#server.catch(() => {
      this.#server = undefined;
    });
    return this.#server;
  }

  /** Where to send the user, and what to remember until they come back. */
  async start(interactionUid: string): Promise<{ url: string; state: string; pending: PendingLogin }> {
    const server = await this.#authorizationServer();
    if (server.authorization_endpoint === undefined) {
      throw new Error(`the identity provider ${this.#options.issuer} has no authorization_endpoint`);
    }
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(server.authorization_endpoint);
    url.searchParams.set("client_id", this.#options.clientId);
    url.searchParams.set("redirect_uri", this.#options.redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", "openid");
    url.searchParams.set("state", state);
    url.searchParams.set("nonce", nonce);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set("code_challenge_method", "S256");
    return { url: url.href, state, pending: { interactionUid, codeVerifier, nonce } };
  }

  /** Exchanges the code the provider sent back; throws when anything does not check out. */
  async finish(callbackUrl: URL, state: string, pending: PendingLogin): Promise<FederatedIdentity> {
    const server = await this.#authorizationServer();
    const params = oauth.validateAuthResponse(server, this.#client, callbackUrl, state);
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      this.#client,
      this.#auth,
      params,
      this.#options.redirectUri,
      pending.codeVerifier,
      this.#http,
    );
    const result = await oauth.processAuthorizationCodeResponse(server, this.#client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (claims === undefined) throw new Error("the identity provider returned no ID token");
    return { sub: claims.sub, groups: groupsFromClaims(claims) };
  }
}
