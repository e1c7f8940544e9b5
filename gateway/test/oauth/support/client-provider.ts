// The MCP SDK's OAuthClientProvider as a desktop client implements it, in memory: it registers itself (DCR), keeps
// its tokens and PKCE verifier, and "opens the browser" by recording the authorization URL for the test to drive.
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

export const CLIENT_REDIRECT = "http://127.0.0.1:1/callback";

export class MemoryClientProvider implements OAuthClientProvider {
  readonly #redirect: string;
  client: OAuthClientInformationFull | undefined;
  stored: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;

  /** An https URL: the client identifies by its Client ID Metadata Document there, where the server supports it. */
  readonly clientMetadataUrl: string | undefined;

  /** `redirect`: where the client listens for the code (a desktop client's loopback server). */
  constructor(redirect = CLIENT_REDIRECT, clientMetadataUrl?: string) {
    this.#redirect = redirect;
    this.clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.#redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test <b>Assistant</b>",
      redirect_uris: [this.#redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation(): OAuthClientInformationFull | undefined {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationFull): void {
    this.client = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.stored;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.stored = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}
