// Dynamic Client Registration's two modes (open, or behind an initial access token) and the client authentication
// methods.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MACHINE_CLIENTS_YAML, type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";
import { REDIRECT, register, token } from "./support/oauth-requests.ts";

const MACHINE = {
  client_name: "job",
  grant_types: ["client_credentials"],
  response_types: [],
};

describe("registration behind an initial access token (SVC_OAUTH_REGISTRATION_TOKEN)", () => {
  let stack: OAuthStack;
  beforeAll(async () => {
    stack = await startOAuthStack({
      SVC_OAUTH_DEV_KEYS: "true",
      SVC_OAUTH_REGISTRATION_TOKEN: "let-me-register",
      SVC_OAUTH_REGISTRATIONS_PER_MINUTE: "3",
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("refuses a registration without the token or with another one", async () => {
    expect((await register(stack.url, MACHINE)).status).toBe(401);
    expect((await register(stack.url, MACHINE, { authorization: "Bearer not-it" })).status).toBe(401);
  });

  it("accepts one with the token", async () => {
    const { status, body } = await register(stack.url, MACHINE, { authorization: "Bearer let-me-register" });
    expect(status).toBe(201);
    expect(typeof body.client_secret).toBe("string");
  });

  it("refuses registrations over the gateway's budget (three a minute here) with 429 and Retry-After", async () => {
    const response = await fetch(`${stack.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer let-me-register" },
      body: JSON.stringify(MACHINE),
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await response.json()) as { error_description: string }).error_description).toMatch(
      /too many client registrations/,
    );
  });
});

describe("open registration with machine clients allowed by the operator, and client authentication", () => {
  let stack: OAuthStack;
  beforeAll(async () => {
    stack = await startOAuthStack(undefined, { oauthYaml: MACHINE_CLIENTS_YAML });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("authenticates a client_secret_post client by the secret in the body", async () => {
    const { body } = await register(stack.url, {
      ...MACHINE,
      token_endpoint_auth_method: "client_secret_post",
    });
    const good = await token(stack.url, {
      grant_type: "client_credentials",
      client_id: body.client_id as string,
      client_secret: body.client_secret as string,
    });
    expect(good.status).toBe(200);
    expect(good.body.token_type).toBe("Bearer");
    const wrong = await token(stack.url, {
      grant_type: "client_credentials",
      client_id: body.client_id as string,
      client_secret: "not-the-secret",
    });
    expect(wrong.status).toBe(401);
  });

  it("refuses client_credentials to a public client", async () => {
    const { status, body } = await register(stack.url, { ...MACHINE, token_endpoint_auth_method: "none" });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_client_metadata");
    expect(body.error_description).toMatch(/client_credentials needs a client secret/);
  });

  it("gives a public client no secret", async () => {
    const { status, body } = await register(stack.url, {
      client_name: "desktop",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    expect(status).toBe(201);
    expect(body.client_secret).toBeUndefined();
  });
});
