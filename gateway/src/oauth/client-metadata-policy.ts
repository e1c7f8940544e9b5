// What this authorization server accepts as a client's metadata, whoever wrote it (a registration, a Client ID Metadata
// Document, a record read back from the store): every field bounded, redirect URIs only where a code may safely go,
// no URL the server would fetch, and machine clients only where the operator allows them. oidc-provider applies its
// own rules (RFC 7591, OIDC Registration) after these; this is the gateway's policy on top.

/** Client metadata that makes the server fetch a URL the client chose: refused (SSRF), no enabled feature needs them. */
export const FETCHED_CLIENT_METADATA = ["jwks_uri", "sector_identifier_uri", "request_uris"];

/** Bounds on what a stranger may have stored: open registration keeps each record for a while. */
export const CLIENT_METADATA_BOUNDS = {
  /** Names shown to users and other short texts (client_name, software_id, software_version, contacts). */
  text: 200,
  /** Any other string, URIs included. */
  string: 2000,
  /** Members of any list (redirect URIs, contacts, grant types…). */
  listMembers: 10,
} as const;

const SHORT_TEXT = new Set(["client_name", "software_id", "software_version", "contacts"]);

export interface ClientMetadataPolicy {
  /** client_credentials may be registered (the operator allows machine clients). */
  machineClients: boolean;
  /** Private-use redirect URI schemes the operator allows besides reverse-domain ones (oauth_server.registration). */
  redirectSchemes: readonly string[];
}

/** Why `metadata` is refused, or undefined when the policy accepts it. */
export function clientMetadataProblem(
  metadata: Readonly<Record<string, unknown>>,
  policy: ClientMetadataPolicy,
): string | undefined {
  for (const [key, value] of Object.entries(metadata)) {
    const problem = boundsProblem(key, value);
    if (problem !== undefined) return problem;
  }
  for (const key of FETCHED_CLIENT_METADATA) {
    if (metadata[key] !== undefined) {
      return `${key} is not accepted: this server fetches no client-supplied URL (clients authenticate with a secret, or none with PKCE)`;
    }
  }
  for (const uri of asList(metadata.redirect_uris)) {
    const problem = redirectUriProblem(uri, policy);
    if (problem !== undefined) return problem;
  }
  const grantTypes = asList(metadata.grant_types);
  if (grantTypes.includes("client_credentials")) {
    if (!policy.machineClients) {
      return "client_credentials is not open to registered clients on this gateway: a machine client is set up by the operator (oauth_server.registration.client_credentials, or registration with SVC_OAUTH_REGISTRATION_TOKEN)";
    }
    // A machine token for whoever asks, with no secret at all: client_credentials needs a confidential client.
    if (metadata.token_endpoint_auth_method === "none") {
      return "client_credentials needs a client secret: token_endpoint_auth_method none is for public clients using PKCE";
    }
  }
  return undefined;
}

function boundsProblem(key: string, value: unknown): string | undefined {
  const max = SHORT_TEXT.has(key) ? CLIENT_METADATA_BOUNDS.text : CLIENT_METADATA_BOUNDS.string;
  if (typeof value === "string" && value.length > max) return `${key} is longer than ${max} characters`;
  if (Array.isArray(value)) {
    if (value.length > CLIENT_METADATA_BOUNDS.listMembers) {
      return `${key} has more than ${CLIENT_METADATA_BOUNDS.listMembers} members`;
    }
    const long = value.find((member) => typeof member === "string" && member.length > max);
    if (long !== undefined) return `a member of ${key} is longer than ${max} characters`;
  }
  return undefined;
}

/**
 * Where an authorization code may be sent (RFC 8252, and the MCP authorization spec: "localhost URLs or HTTPS"):
 * https; http only to the loopback interface, where the client itself listens; or a private-use scheme an app
 * claims on the device — reverse-domain (`com.example.app:`, RFC 8252 7.1) or listed by the operator. Plain http to
 * anywhere else would hand the code to whoever is on the network; `javascript:`, `data:` and the like run in the
 * browser.
 */
export function redirectUriProblem(uri: string, policy: ClientMetadataPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI ${quote(uri)} is not a URL`;
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === "https") return undefined;
  if (scheme === "http") {
    return isLoopbackHost(url.hostname)
      ? undefined
      : `redirect URI ${quote(uri)} is plain http to another machine: use https, or http only on loopback (127.0.0.1, [::1], localhost) for a client listening on this device`;
  }
  if (policy.redirectSchemes.includes(scheme) || isReverseDomainScheme(scheme)) return undefined;
  return `redirect URI scheme ${scheme}: is not accepted: use https, loopback http, or an app's reverse-domain scheme such as com.example.app: (RFC 8252 7.1); the operator may allow others (oauth_server.registration.redirect_uri_schemes)`;
}

/** 127.0.0.0/8, ::1 and localhost: the interfaces a native client's own loopback server listens on. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** RFC 8252 7.1: a reverse domain name the app's publisher controls, e.g. com.example.app (at least one dot). */
function isReverseDomainScheme(scheme: string): boolean {
  return /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/.test(scheme);
}

function asList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
