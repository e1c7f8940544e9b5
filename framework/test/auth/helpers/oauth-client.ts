import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

/** An in-memory OAuthClientProvider, as an MCP client application would implement it. */
export class MemoryOAuthClient implements OAuthClientProvider {
  readonly redirectUrl = "http://127.0.0.1:1/callback";
  information?: OAuthClientInformationMixed;
  savedTokens?: OAuthTokens;
  verifier?: string;
  /** Where the SDK asked us to send the user. */
  authorizationUrl?: URL;
  private readonly authMethod: string;

  constructor(authMethod = "client_secret_basic") {
    this.authMethod = authMethod;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "svc auth test client",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.authMethod,
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error("no code verifier saved");
    return this.verifier;
  }
}

/** Plays the user agent: follows the authorization URL and returns the redirect's query parameters. */
export async function followAuthorization(url: URL): Promise<URLSearchParams> {
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  if (response.status !== 302 || !location) {
    throw new Error(`/authorize answered ${response.status}: ${await response.text()}`);
  }
  return new URL(location).searchParams;
}
