// How the end-to-end clients get an access token: the OAuth client_credentials grant (RFC 6749 section 4.4) with
// client_secret_basic and a resource indicator (RFC 8707) naming the audience the gateway expects.

export interface ClientCredentialsRequest {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  resource: string;
}

export async function clientCredentialsToken(request: ClientCredentialsRequest): Promise<string> {
  const basic = Buffer.from(
    `${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`,
  ).toString("base64");
  const response = await fetch(request.tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${basic}` },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: request.resource }),
  });
  const body = (await response.json().catch(() => ({}))) as { access_token?: string; error?: string };
  if (!response.ok || typeof body.access_token !== "string") {
    throw new Error(
      `${request.tokenUrl} refused a token for client '${request.clientId}': HTTP ${response.status} ${body.error ?? ""}`.trim(),
    );
  }
  return body.access_token;
}
