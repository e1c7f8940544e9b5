// A real gateway with oauth_server on, its company identity provider and an upstream, for the OAuth-server tests.
// The issuer is the gateway's URL, fixed before it starts, so the port is picked first.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../bench/free-port.ts";
import { type RunningGateway, startGateway } from "../../../src/server/start-gateway.ts";
import { TEST_GATEWAY_ENV } from "../../proxy/support/gateway.ts";
import { startUpstream } from "../../proxy/support/upstream.ts";
import { GATEWAY_CLIENT, startCompanyIdp } from "./company-idp.ts";

/** oauth_server lines with which the operator lets registered clients use client_credentials (machine clients). */
export const MACHINE_CLIENTS_YAML = "  registration:\n    client_credentials: true";

export interface OAuthGatewayOptions {
  port: number;
  idpIssuer: string;
  upstreamUrl: string;
  env?: Record<string, string>;
  /** YAML lines added under oauth_server. */
  oauthYaml?: string;
  /** Top-level YAML added after oauth_server (e.g. gateway_policy). */
  extraYaml?: string;
}

export function oauthGatewayConfig(options: OAuthGatewayOptions): string {
  return [
    'version: "1.0"',
    "identity_providers:",
    "  - name: company",
    "    type: hosted_idp",
    `    issuer: ${JSON.stringify(options.idpIssuer)}`,
    `    jwks_uri: ${JSON.stringify(`${options.idpIssuer}/jwks`)}`,
    "servers:",
    "  - name: tools",
    `    url: ${JSON.stringify(options.upstreamUrl)}`,
    "    upstream_auth_type: none",
    "  - name: other",
    `    url: ${JSON.stringify(options.upstreamUrl)}`,
    "    upstream_auth_type: none",
    "oauth_server:",
    `  idp_client_id: ${GATEWAY_CLIENT.id}`,
    `  idp_client_secret: ${GATEWAY_CLIENT.secret}`,
    ...(options.oauthYaml === undefined ? [] : [options.oauthYaml]),
    ...(options.extraYaml === undefined ? [] : [options.extraYaml]),
    "",
  ].join("\n");
}

export async function startOAuthGateway(
  options: OAuthGatewayOptions,
): Promise<{ gateway: RunningGateway; url: string; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-oauth-"));
  const configPath = join(dir, "config.yaml");
  await writeFile(configPath, oauthGatewayConfig(options));
  const url = `http://127.0.0.1:${options.port}`;
  const gateway = await startGateway({
    configPath,
    host: "127.0.0.1",
    port: options.port,
    env: { ...TEST_GATEWAY_ENV, SVC_PUBLIC_URL: url, ...options.env },
  });
  return {
    gateway,
    url,
    close: async () => {
      await gateway.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface OAuthStack {
  url: string;
  /** The company identity provider's issuer. */
  idpIssuer: string;
  gateway: RunningGateway;
  close(): Promise<void>;
}

export interface OAuthStackOptions {
  /** Where the company identity provider listens (startCompanyIdp's host). */
  idpHost?: "127.0.0.1" | "::1";
  /** YAML lines added under oauth_server. */
  oauthYaml?: string;
  /** Top-level YAML added after oauth_server. */
  extraYaml?: string;
}

/** The company identity provider (alice: staff, eng), an upstream and a gateway with oauth_server on. */
export async function startOAuthStack(
  env: Record<string, string> = { SVC_OAUTH_DEV_KEYS: "true" },
  options: OAuthStackOptions = {},
): Promise<OAuthStack> {
  const port = await freePort();
  const idp = await startCompanyIdp({
    gatewayUrl: `http://127.0.0.1:${port}`,
    groups: { alice: ["staff", "eng"] },
    ...(options.idpHost === undefined ? {} : { host: options.idpHost }),
  });
  const upstream = await startUpstream({ stateful: true });
  const gateway = await startOAuthGateway({
    port,
    idpIssuer: idp.issuer,
    upstreamUrl: upstream.url,
    env,
    ...(options.oauthYaml === undefined ? {} : { oauthYaml: options.oauthYaml }),
    ...(options.extraYaml === undefined ? {} : { extraYaml: options.extraYaml }),
  });
  return {
    url: gateway.url,
    idpIssuer: idp.issuer,
    gateway: gateway.gateway,
    close: async () => {
      await gateway.close();
      await upstream.close();
      await idp.close();
    },
  };
}
