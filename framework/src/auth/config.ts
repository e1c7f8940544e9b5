import { z } from "zod";
import { AuthConfigError } from "./errors.ts";

// The authentication config objects a project's auth.ts passes to configureAuth, with snake_case field names
// (as in svc.json and the environment variables they name). Each object is validated when it is constructed (so a typo in auth.ts fails at import, naming
// the field); environment variables are resolved later, when the server starts (secrets never reach dist/).

/** Asymmetric JWS algorithms accepted for access tokens. HS* and "none" are never accepted. */
export const ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

const envVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name such as JWT_ISSUER");
const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const scopeList = z.array(
  z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be a scope token (no spaces)"),
);

export const jwtAuthConfigSchema = z.strictObject({
  jwks_uri: httpUrl.optional(),
  jwks_uri_env_var: envVarName.optional(),
  /** Extension: a PEM public key given inline (public keys are not secrets). */
  public_key: z.string().includes("-----BEGIN", { error: "must be a PEM block" }).optional(),
  public_key_env_var: envVarName.optional(),
  /** Extension: the expected issuer given inline. */
  issuer: z.string().min(1).optional(),
  issuer_env_var: envVarName.optional(),
  /** Extension: the expected audience(s) given inline. */
  audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  audience_env_var: envVarName.optional(),
  required_scopes: scopeList.default([]),
  /** Extension: accepted algorithms; asymmetric only. */
  algorithms: z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1).optional(),
});
export type JWTAuthConfigInput = z.input<typeof jwtAuthConfigSchema>;
export type JWTAuthConfigFields = z.output<typeof jwtAuthConfigSchema>;

export const staticTokenConfigSchema = z.strictObject({
  tokens: z
    .record(
      // A token must be sendable as `Authorization: Bearer <token>` (RFC 6750 b64token syntax).
      z
        .string()
        .regex(/^[A-Za-z0-9\-._~+/]+=*$/, "a token may only use letters, digits and -._~+/ (RFC 6750)"),
      z.strictObject({ client_id: z.string().min(1), scopes: scopeList.default([]) }),
    )
    .refine((tokens) => Object.keys(tokens).length > 0, "at least one token is required"),
  required_scopes: scopeList.default([]),
});
export type StaticTokenConfigInput = z.input<typeof staticTokenConfigSchema>;
export type StaticTokenConfigFields = z.output<typeof staticTokenConfigSchema>;

/** What the approval hook is asked about at /authorize. */
export interface AuthorizationRequestInfo {
  readonly clientId: string;
  readonly clientName?: string;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  /** The resource (RFC 8707) the token will be issued for: this server's /mcp URL. */
  readonly resource: string;
}
/** The approval hook's answer: approve for a user (the token's `sub`), possibly narrowing scopes, or deny. */
export type ApprovalDecision =
  | { readonly approved: true; readonly subject: string; readonly scopes?: readonly string[] }
  | { readonly approved: false; readonly reason?: string };
/**
 * The user-approval step at /authorize. Return a decision, or a Response to show your own login / consent page
 * (which later sends the user back to /authorize with the same query plus whatever your hook recognises,
 * e.g. a session cookie).
 */
export type ApprovalHook = (
  request: AuthorizationRequestInfo,
  httpRequest: Request,
) => ApprovalDecision | Response | Promise<ApprovalDecision | Response>;

export const oauthServerConfigSchema = z
  .strictObject({
    base_url: httpUrl.optional(),
    issuer_url: httpUrl.optional(),
    service_documentation_url: httpUrl.optional(),
    valid_scopes: scopeList.default([]),
    default_scopes: scopeList.default([]),
    required_scopes: scopeList.default([]),
    base_url_env_var: envVarName.optional(),
    /** Extension: the variable holding the PEM (PKCS#8) private key that signs access tokens. */
    signing_key_env_var: envVarName.default("OAUTH_SIGNING_KEY"),
    /** Extension: lifetimes in seconds (same ranges as the gateway's OAuth server). */
    access_token_ttl: z.int().min(300).max(86400).default(3600),
    refresh_token_ttl: z.int().min(3600).max(2592000).default(604800),
    authorization_code_ttl: z.int().min(30).max(600).default(60),
    /** Extension: the user-approval step at /authorize (see docs/auth.md). */
    approve: z.custom<ApprovalHook>((value) => typeof value === "function", "must be a function").optional(),
  })
  .superRefine((config, ctx) => {
    for (const field of ["default_scopes", "required_scopes"] as const) {
      for (const scope of config[field]) {
        if (!config.valid_scopes.includes(scope)) {
          ctx.addIssue({ code: "custom", path: [field], message: `"${scope}" is not in valid_scopes` });
        }
      }
    }
  });
export type OAuthServerConfigInput = z.input<typeof oauthServerConfigSchema>;
export type OAuthServerConfigFields = z.output<typeof oauthServerConfigSchema>;

export const remoteAuthConfigSchema = z.strictObject({
  authorization_servers: z.array(httpUrl).optional(),
  resource_server_url: httpUrl.optional(),
  authorization_servers_env_var: envVarName.optional(),
  resource_server_url_env_var: envVarName.optional(),
  token_verifier_config: z.unknown().optional(),
});
export type RemoteAuthConfigInput = Omit<z.input<typeof remoteAuthConfigSchema>, "token_verifier_config"> & {
  token_verifier_config?: JWTAuthConfig | JWTAuthConfigInput;
};

/** Parses `input` with `schema`, throwing AuthConfigError that names `Owner.field` on the first problem. */
function parseConfig<S extends z.ZodType>(owner: string, schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? `${owner}.${issue.path.join(".")}` : owner;
    return `${path}: ${issue.message}`;
  });
  const first = result.error.issues[0];
  const field = first && first.path.length > 0 ? `${owner}.${first.path.join(".")}` : owner;
  const error = new AuthConfigError(field, lines.join("; "));
  error.message = lines.join("; ");
  throw error;
}

/** Validates JWT bearer tokens against a JWKS endpoint or a PEM public key. */
export class JWTAuthConfig {
  readonly kind = "jwt";
  readonly fields: JWTAuthConfigFields;
  constructor(input: JWTAuthConfigInput) {
    this.fields = parseConfig("JWTAuthConfig", jwtAuthConfigSchema, input);
    // A JWKS or a PEM key, not both; within one kind the env var overrides the literal (the *_env_var rule).
    const jwks = this.fields.jwks_uri ?? this.fields.jwks_uri_env_var;
    const pem = this.fields.public_key ?? this.fields.public_key_env_var;
    if (jwks !== undefined && pem !== undefined) {
      throw new AuthConfigError(
        "JWTAuthConfig.public_key_env_var",
        "give one key source: a JWKS (jwks_uri / jwks_uri_env_var) or a PEM key (public_key / public_key_env_var), not both",
      );
    }
  }
}

/** Fixed tokens, for development only. Warned about at start. */
export class StaticTokenConfig {
  readonly kind = "static";
  readonly fields: StaticTokenConfigFields;
  constructor(input: StaticTokenConfigInput) {
    this.fields = parseConfig("StaticTokenConfig", staticTokenConfigSchema, input);
  }
}

/** The built-in OAuth 2.0 authorization server. */
export class OAuthServerConfig {
  readonly kind = "oauth_server";
  readonly fields: OAuthServerConfigFields;
  constructor(input: OAuthServerConfigInput = {}) {
    this.fields = parseConfig("OAuthServerConfig", oauthServerConfigSchema, input);
  }
}

/** Validates tokens issued by the listed authorization servers. */
export class RemoteAuthConfig {
  readonly kind = "remote";
  readonly fields: Omit<z.output<typeof remoteAuthConfigSchema>, "token_verifier_config"> & {
    token_verifier_config: JWTAuthConfig;
  };
  constructor(input: RemoteAuthConfigInput) {
    const parsed = parseConfig("RemoteAuthConfig", remoteAuthConfigSchema, input);
    const verifier = parsed.token_verifier_config;
    let tokenVerifier: JWTAuthConfig;
    try {
      tokenVerifier =
        verifier instanceof JWTAuthConfig
          ? verifier
          : new JWTAuthConfig((verifier ?? {}) as JWTAuthConfigInput);
    } catch (error) {
      if (!(error instanceof AuthConfigError)) throw error;
      const field = error.field.replace("JWTAuthConfig", "RemoteAuthConfig.token_verifier_config");
      throw new AuthConfigError(field, error.message.replaceAll("JWTAuthConfig", "token_verifier_config"));
    }
    // Keys and issuers come from the authorization servers' metadata; a second source would be ambiguous.
    for (const key of [
      "jwks_uri",
      "jwks_uri_env_var",
      "public_key",
      "public_key_env_var",
      "issuer",
      "issuer_env_var",
    ] as const) {
      if (tokenVerifier.fields[key] !== undefined) {
        throw new AuthConfigError(
          `RemoteAuthConfig.token_verifier_config.${key}`,
          "not used with RemoteAuthConfig: issuers and keys are discovered from authorization_servers",
        );
      }
    }
    this.fields = { ...parsed, token_verifier_config: tokenVerifier };
  }
}

export type AuthConfig = JWTAuthConfig | StaticTokenConfig | OAuthServerConfig | RemoteAuthConfig;

/** API-key pass-through: the key is read from `header_name`, `header_prefix` stripped. */
export interface ApiKeyConfig {
  readonly header_name: string;
  readonly header_prefix?: string;
}
