// Plain HTTP requests to the gateway's authorization server, for the tests that do what the SDK client never would.
import { createHash, randomBytes } from "node:crypto";
import { Browser } from "./browser.ts";

export const REDIRECT = "http://127.0.0.1:1/callback";

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: { text } };
  }
}

export async function register(
  gateway: string,
  metadata: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${gateway}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(metadata),
  });
  return answer(response);
}

/** A public client (PKCE, no secret) registered for the authorization code and refresh token grants. */
export async function registerPublicClient(
  gateway: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const { status, body } = await register(
    gateway,
    {
      client_name: "hostile-test",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    headers,
  );
  if (status !== 201) throw new Error(`registration failed: ${status} ${JSON.stringify(body)}`);
  return body.client_id as string;
}

export async function token(
  gateway: string,
  params: Record<string, string>,
  basic?: { id: string; secret: string },
): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (basic !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString("base64")}`;
  }
  const response = await fetch(`${gateway}/oauth/token`, {
    method: "POST",
    headers,
    body: new URLSearchParams(params),
  });
  return answer(response);
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export function authorizeUrl(gateway: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${gateway}/oauth/authorize`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", "mcp");
  url.searchParams.set("state", randomBytes(8).toString("hex"));
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.href;
}

/** Logs `user` in through the browser for `clientId` and returns the code and its verifier. */
export async function authorizationCode(
  gateway: string,
  clientId: string,
  resource: string,
  user = "alice",
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const url = authorizeUrl(gateway, {
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource,
  });
  const { landed } = await new Browser().authorize(url, REDIRECT, user);
  const code = landed.searchParams.get("code");
  if (code === null) throw new Error(`no code: ${landed.href}`);
  return { code, verifier };
}

/** The code exchanged for tokens. */
export function exchange(
  gateway: string,
  clientId: string,
  code: string,
  verifier: string,
  resource: string,
) {
  return token(gateway, {
    grant_type: "authorization_code",
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource,
  });
}

export function refresh(gateway: string, clientId: string, refreshToken: string) {
  return token(gateway, { grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken });
}
