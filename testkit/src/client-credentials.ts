// How test clients get an access token: the OAuth client_credentials grant (RFC 6749 section 4.4) with
// client_secret_basic and a resource indicator (RFC 8707) naming the audience the resource server expects. The one
// token request of every suite: the e2e clients against the e2e identity provider (its process, or in kind), and
// the framework and gateway fixtures against their in-process providers.

export interface ClientCredentialsRequest {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  resource: string;
  /** Space-separated scopes; omitted, the provider grants its default for the client. */
  scope?: string;
  /** More request headers, e.g. a DPoP proof (RFC 9449) that asks for a token bound to its key. */
  headers?: Record<string, string>;
  /** The token_type the provider must answer with ("DPoP" for a bound token): anything else is an error. */
  tokenType?: string;
}

export async function clientCredentialsToken(request: ClientCredentialsRequest): Promise<string> {
  const basic = Buffer.from(
    `${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`,
  ).toString("base64");
  const response = await fetch(request.tokenUrl, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${basic}`,
      ...request.headers,
    },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      resource: request.resource,
      ...(request.scope === undefined ? {} : { scope: request.scope }),
    }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    token_type?: string;
    error?: string;
    error_description?: string;
  };
  if (!response.ok || typeof body.access_token !== "string") {
    const reason = [body.error, body.error_description].filter((part) => part !== undefined).join(": ");
    throw new Error(
      `${request.tokenUrl} refused a token for client '${request.clientId}': HTTP ${response.status} ${reason}`.trim(),
    );
  }
  if (request.tokenType !== undefined && body.token_type !== request.tokenType) {
    throw new Error(
      `${request.tokenUrl} issued a ${body.token_type} token for client '${request.clientId}', not ${request.tokenType}`,
    );
  }
  return body.access_token;
}
