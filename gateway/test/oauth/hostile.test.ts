// What a hostile or broken client tries against the gateway's authorization server, each refused: PKCE missing or
// wrong, a code used twice, a redirect URI not registered or differing by a path segment, open redirects, a token
// for another resource, a refresh for a resource outside the grant (refused before the token is spent), a rotated
// refresh token reused (the whole family revoked), a client registering a jwks_uri
// on loopback for the server to fetch (SSRF).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient } from "../proxy/support/gateway.ts";
import { Browser } from "./support/browser.ts";
import { type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";
import {
  authorizationCode,
  authorizeUrl,
  exchange,
  pkce,
  REDIRECT,
  refresh,
  register,
  registerPublicClient,
  token,
} from "./support/oauth-requests.ts";

let stack: OAuthStack;
let clientId: string;
let tools: string;

beforeAll(async () => {
  stack = await startOAuthStack();
  clientId = await registerPublicClient(stack.url);
  tools = `${stack.url}/tools/mcp`;
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** The gateway's answer to an authorization request, not followed: where it would send the browser. */
async function authorize(
  params: Record<string, string | undefined>,
): Promise<{ status: number; location: string | null }> {
  const response = await fetch(authorizeUrl(stack.url, params), { redirect: "manual" });
  await response.body?.cancel();
  return { status: response.status, location: response.headers.get("location") };
}

describe("PKCE", () => {
  it("refuses an authorization request without a code challenge", async () => {
    const { status, location } = await authorize({
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: tools,
    });
    expect(status).toBe(303);
    const back = new URL(location as string);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("code")).toBeNull();
  });

  it("refuses the plain method", async () => {
    const { verifier } = pkce();
    const { location } = await authorize({
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: tools,
      code_challenge: verifier,
      code_challenge_method: "plain",
    });
    expect(new URL(location as string).searchParams.get("error")).toBe("invalid_request");
  });

  it("refuses a code exchanged with the wrong verifier", async () => {
    const { code } = await authorizationCode(stack.url, clientId, tools);
    const answer = await exchange(stack.url, clientId, code, pkce().verifier, tools);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_grant");
  }, 60_000);
});

describe("authorization codes", () => {
  it("refuse a second use, and revoke what the first use issued", async () => {
    const { code, verifier } = await authorizationCode(stack.url, clientId, tools);
    const first = await exchange(stack.url, clientId, code, verifier, tools);
    expect(first.status).toBe(200);
    const second = await exchange(stack.url, clientId, code, verifier, tools);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    const afterReuse = await refresh(stack.url, clientId, first.body.refresh_token as string);
    expect(afterReuse.body.error).toBe("invalid_grant");
  }, 60_000);
});

describe("consent", () => {
  it("sends the user back with access_denied and no code when they deny", async () => {
    const url = authorizeUrl(stack.url, {
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      resource: tools,
    });
    const { landed } = await new Browser().authorize(url, REDIRECT, "alice", { deny: true });
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("code")).toBeNull();
  }, 60_000);
});

describe("the login at the identity provider", () => {
  it("cannot be finished in another browser than the one that started it (login CSRF)", async () => {
    const url = authorizeUrl(stack.url, {
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
      resource: tools,
    });
    // The victim's browser starts the authorization and is sent to the identity provider...
    const { landed: atIdp } = await new Browser().authorize(url, stack.idpIssuer, "alice");
    // ...and the attacker's browser, without the victim's cookies, completes that login.
    await expect(new Browser().authorize(atIdp.href, REDIRECT, "mallory")).rejects.toThrow(
      /stuck at .*\/oauth\/callback.*HTTP 400/,
    );
  }, 60_000);
});

describe("redirect URIs", () => {
  const { challenge } = pkce();
  const attempt = (redirectUri: string) =>
    authorize({
      client_id: clientId,
      redirect_uri: redirectUri,
      resource: tools,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });

  for (const [what, uri] of [
    ["not registered", "https://attacker.example/callback"],
    ["differing by a path segment", `${REDIRECT}/more`],
    ["differing by a trailing slash", `${REDIRECT}/`],
    ["with a query added", `${REDIRECT}?next=https://attacker.example`],
    ["on another port", "http://127.0.0.1:2/callback"],
    ["protocol-relative", "//attacker.example/callback"],
  ] as const) {
    it(`refuses one ${what}, without redirecting anywhere`, async () => {
      const { status, location } = await attempt(uri);
      expect(status).toBe(400);
      expect(location).toBeNull();
    });
  }

  it("does not follow a login callback with an unknown state anywhere", async () => {
    const response = await fetch(`${stack.url}/oauth/callback?code=x&state=forged`, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toMatch(/unknown or expired login/);
  });
});

describe("resources (RFC 8707)", () => {
  it("refuses a token for another server of the gateway at this server", async () => {
    const other = `${stack.url}/other/mcp`;
    const { code, verifier } = await authorizationCode(stack.url, clientId, other);
    const issued = await exchange(stack.url, clientId, code, verifier, other);
    expect(issued.status).toBe(200);
    const headers = { authorization: `Bearer ${issued.body.access_token}` };
    // Good for the server it was issued for...
    const { client } = await connectClient(other, { headers });
    await client.close();
    // ...and refused at another.
    const response = await fetch(tools, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/invalid_token/);
  }, 60_000);

  it("refuses to issue a token for a resource that is not this gateway", async () => {
    const { status, location } = await authorize({
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: "https://attacker.example/mcp",
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
    });
    expect(status).toBe(303);
    expect(new URL(location as string).searchParams.get("error")).toBe("invalid_target");
  });
});

describe("refresh token rotation", () => {
  it("refuses a resource outside the grant without spending the refresh token", async () => {
    const { code, verifier } = await authorizationCode(stack.url, clientId, tools);
    const issued = await exchange(stack.url, clientId, code, verifier, tools);
    const first = issued.body.refresh_token as string;
    for (const resource of [`${stack.url}/other/mcp`, "https://attacker.example/mcp"]) {
      const wrong = await token(stack.url, {
        grant_type: "refresh_token",
        client_id: clientId,
        refresh_token: first,
        resource,
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe("invalid_target");
    }
    // The same token, with the granted resource: no reuse, no revocation, a working access token.
    const right = await token(stack.url, {
      grant_type: "refresh_token",
      client_id: clientId,
      refresh_token: first,
      resource: tools,
    });
    expect(right.status).toBe(200);
    const { client } = await connectClient(tools, {
      headers: { authorization: `Bearer ${right.body.access_token}` },
    });
    await client.close();
  }, 60_000);

  it("revokes the whole family when a rotated refresh token is used again", async () => {
    const { code, verifier } = await authorizationCode(stack.url, clientId, tools);
    const issued = await exchange(stack.url, clientId, code, verifier, tools);
    const first = issued.body.refresh_token as string;
    const rotated = await refresh(stack.url, clientId, first);
    expect(rotated.status).toBe(200);
    const second = rotated.body.refresh_token as string;
    expect(second).not.toBe(first);

    const { client } = await connectClient(tools, {
      headers: { authorization: `Bearer ${rotated.body.access_token}` },
    });
    await client.close();

    const reused = await refresh(stack.url, clientId, first);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // The access token issued with the rotation is refused at once too.
    await expect(
      connectClient(tools, { headers: { authorization: `Bearer ${rotated.body.access_token}` } }),
    ).rejects.toThrow();
    // The legitimate holder's current token went with it: the thief cannot have kept a working one either.
    const afterReuse = await refresh(stack.url, clientId, second);
    expect(afterReuse.status).toBe(400);
    expect(afterReuse.body.error).toBe("invalid_grant");
  }, 60_000);
});

describe("Dynamic Client Registration", () => {
  for (const uri of [
    "http://127.0.0.1:6379/keys",
    "http://localhost/jwks",
    "http://169.254.169.254/latest",
  ]) {
    it(`refuses jwks_uri ${uri} (the server would fetch it)`, async () => {
      const { status, body } = await register(stack.url, {
        client_name: "ssrf",
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "none",
        jwks_uri: uri,
      });
      expect(status).toBe(400);
      expect(body.error).toBe("invalid_client_metadata");
      expect(body.error_description).toMatch(/jwks_uri/);
    });
  }

  it("refuses a redirect URI with a fragment", async () => {
    const { status, body } = await register(stack.url, {
      client_name: "fragment",
      redirect_uris: [`${REDIRECT}#x`],
      token_endpoint_auth_method: "none",
    });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_redirect_uri");
  });
});
