// Behind a TLS-terminating proxy the gateway itself is reached over http, while its issuer (SVC_PUBLIC_URL) is
// https: the login's cookies must still be Secure, and what the client sends as Host or X-Forwarded-* must not change
// the URLs the authorization server names.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { MACHINE_CLIENTS_YAML, startOAuthGateway } from "./support/oauth-gateway.ts";
import {
  authorizeUrl,
  pkce,
  REDIRECT,
  register,
  registerPublicClient,
  token,
} from "./support/oauth-requests.ts";

const PUBLIC = "https://mcp.example.test";
let idp: CompanyIdp;
let upstream: Upstream;
let gateway: Awaited<ReturnType<typeof startOAuthGateway>>;
/** Configured with oauth_server.issuer and no SVC_PUBLIC_URL, reached under its loopback address. */
let issuerOnly: Awaited<ReturnType<typeof startOAuthGateway>>;

beforeAll(async () => {
  const port = await freePort();
  idp = await startCompanyIdp({ gatewayUrl: PUBLIC, groups: {} });
  upstream = await startUpstream({ stateful: true });
  gateway = await startOAuthGateway({
    port,
    idpIssuer: idp.issuer,
    upstreamUrl: upstream.url,
    oauthYaml: MACHINE_CLIENTS_YAML,
    env: { SVC_OAUTH_DEV_KEYS: "true", SVC_PUBLIC_URL: PUBLIC },
  });
  issuerOnly = await startOAuthGateway({
    port: await freePort(),
    idpIssuer: idp.issuer,
    upstreamUrl: upstream.url,
    oauthYaml: `  issuer: ${PUBLIC}\n${MACHINE_CLIENTS_YAML}`,
    env: { SVC_OAUTH_DEV_KEYS: "true", SVC_PUBLIC_URL: "" },
  });
}, 60_000);

afterAll(async () => {
  await issuerOnly?.close();
  await gateway?.close();
  await upstream?.close();
  await idp?.close();
});

it("names only the public https URL, whatever the request says, and sets Secure cookies", async () => {
  const metadata = await fetch(`${gateway.url}/.well-known/oauth-authorization-server`, {
    headers: { "x-forwarded-host": "attacker.example", "x-forwarded-proto": "http" },
  });
  const body = (await metadata.json()) as Record<string, string>;
  expect(body.issuer).toBe(PUBLIC);
  expect(body.authorization_endpoint).toBe(`${PUBLIC}/oauth/authorize`);
  expect(body.registration_endpoint).toBe(`${PUBLIC}/oauth/register`);

  const clientId = await registerPublicClient(gateway.url);
  const url = authorizeUrl(gateway.url, {
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
  });
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(303);
  expect(response.headers.get("location")).toMatch(/^\/oauth\/interaction\/|^https:\/\/mcp\.example\.test\//);
  const cookies = response.headers.getSetCookie();
  expect(cookies.length).toBeGreaterThan(0);
  for (const cookie of cookies) expect(cookie.toLowerCase()).toContain("; secure");
}, 60_000);

it("admits its tokens under whatever name it is reached, as their resource is the issuer's", async () => {
  const { body } = await register(issuerOnly.url, {
    client_name: "job",
    grant_types: ["client_credentials"],
    response_types: [],
  });
  const issued = await token(
    issuerOnly.url,
    { grant_type: "client_credentials", resource: `${PUBLIC}/tools/mcp` },
    { id: body.client_id as string, secret: body.client_secret as string },
  );
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  const { client } = await connectClient(`${issuerOnly.url}/tools/mcp`, {
    headers: { authorization: `Bearer ${issued.body.access_token}` },
  });
  await client.close();
}, 60_000);
