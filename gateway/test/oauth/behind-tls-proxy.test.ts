// Behind a TLS-terminating proxy the gateway itself is reached over http, while its issuer (SVC_PUBLIC_URL) is
// https: the login's cookies must still be Secure, and what the client sends as Host or X-Forwarded-* must not change
// the URLs the authorization server names.
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../bench/free-port.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { startOAuthGateway } from "./support/oauth-gateway.ts";
import { authorizeUrl, pkce, REDIRECT, registerPublicClient } from "./support/oauth-requests.ts";

const PUBLIC = "https://mcp.example.test";
let idp: CompanyIdp;
let upstream: Upstream;
let gateway: Awaited<ReturnType<typeof startOAuthGateway>>;

beforeAll(async () => {
  const port = await freePort();
  idp = await startCompanyIdp({ gatewayUrl: PUBLIC, groups: {} });
  upstream = await startUpstream({ stateful: true });
  gateway = await startOAuthGateway({
    port,
    idpIssuer: idp.issuer,
    upstreamUrl: upstream.url,
    env: { SVC_OAUTH_DEV_KEYS: "true", SVC_PUBLIC_URL: PUBLIC },
  });
}, 60_000);

afterAll(async () => {
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
