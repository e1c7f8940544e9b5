/**
 * A broken authentication configuration. The runtime prints the message and refuses to start, so the
 * message always names the config field or environment variable at fault: auth never fails open.
 */
export class AuthConfigError extends Error {
  /** The config field (e.g. `JWTAuthConfig.jwks_uri`) or environment variable (e.g. `JWT_ISSUER`) at fault. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "AuthConfigError";
    this.field = field;
  }
}
