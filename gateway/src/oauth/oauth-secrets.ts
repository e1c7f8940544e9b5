// The OAuth server's secrets come from the environment (a Kubernetes Secret in production), never from the config
// file and never generated silently: replicas must agree on the signing keys (a token signed by one is verified by
// all) and on the KV key (a record sealed by one is opened by all). Only SVC_OAUTH_DEV_KEYS=true lets a single
// development process make up both, and the gateway says so at start.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { JWK } from "oidc-provider";

export interface OAuthSecrets {
  /** Private JWKs; the first of each algorithm signs, all are published (rotation: add, then promote, then drop). */
  signingKeys: JWK[];
  /** 32 bytes sealing the KV records and, derived from it, the provider's cookie keys. */
  kvKey: Buffer;
  /** Set: Dynamic Client Registration requires this initial access token; unset: registration is open. */
  registrationToken: string | undefined;
  /** True when the keys were made up for this process (SVC_OAUTH_DEV_KEYS=true). */
  ephemeral: boolean;
}

export class OAuthSecretsError extends Error {
  override readonly name = "OAuthSecretsError";
}

const SIGNING_ALGORITHMS = new Set(["RS256", "PS256", "ES256", "EdDSA"]);

export function readOAuthSecrets(env: Record<string, string | undefined>): OAuthSecrets {
  const registrationToken = env.SVC_OAUTH_REGISTRATION_TOKEN?.trim() || undefined;
  const signingText = env.SVC_OAUTH_SIGNING_KEYS?.trim();
  const kvText = env.SVC_OAUTH_KV_KEY?.trim();
  if (!signingText && !kvText && env.SVC_OAUTH_DEV_KEYS === "true") {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return {
      signingKeys: [{ ...privateKey.export({ format: "jwk" }), alg: "ES256", use: "sig", kid: "dev" } as JWK],
      kvKey: randomBytes(32),
      registrationToken,
      ephemeral: true,
    };
  }
  if (!signingText || !kvText) {
    const missing = [!signingText && "SVC_OAUTH_SIGNING_KEYS", !kvText && "SVC_OAUTH_KV_KEY"].filter(Boolean);
    throw new OAuthSecretsError(
      `oauth_server is configured but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not set: the signing keys (a JWKS of private keys, JSON) and the 32-byte base64 KV encryption key come from the environment so every replica agrees. For a single development process only, set SVC_OAUTH_DEV_KEYS=true to generate throwaway ones`,
    );
  }
  return {
    signingKeys: parseSigningKeys(signingText),
    kvKey: parseKvKey(kvText),
    registrationToken,
    ephemeral: false,
  };
}

function parseSigningKeys(text: string): JWK[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OAuthSecretsError(
      'SVC_OAUTH_SIGNING_KEYS is not JSON (expected {"keys":[<private JWK>, ...]})',
    );
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 10) {
    throw new OAuthSecretsError('SVC_OAUTH_SIGNING_KEYS must be {"keys":[...]} with 1 to 10 private JWKs');
  }
  keys.forEach((key: Record<string, unknown>, index) => {
    if (typeof key !== "object" || key === null || typeof key.kid !== "string" || key.kid === "") {
      throw new OAuthSecretsError(`SVC_OAUTH_SIGNING_KEYS keys[${index}] has no kid`);
    }
    if (typeof key.alg !== "string" || !SIGNING_ALGORITHMS.has(key.alg)) {
      throw new OAuthSecretsError(
        `SVC_OAUTH_SIGNING_KEYS keys[${index}] (kid ${key.kid}): alg must be one of ${[...SIGNING_ALGORITHMS].join(", ")}`,
      );
    }
    if (key.d === undefined) {
      throw new OAuthSecretsError(
        `SVC_OAUTH_SIGNING_KEYS keys[${index}] (kid ${key.kid}) is a public key; the private key (d) is needed to sign`,
      );
    }
  });
  return keys as JWK[];
}

/**
 * SVC_OAUTH_KV_KEY alone, for upstream OAuth (which signs nothing): undefined when unset, a throwaway key with
 * SVC_OAUTH_DEV_KEYS=true (one development process only), and an OAuthSecretsError when it is not 32 bytes.
 */
export function readKvKey(
  env: Record<string, string | undefined>,
): { key: Buffer; ephemeral: boolean } | undefined {
  const text = env.SVC_OAUTH_KV_KEY?.trim();
  if (text) return { key: parseKvKey(text), ephemeral: false };
  if (env.SVC_OAUTH_DEV_KEYS === "true") return { key: randomBytes(32), ephemeral: true };
  return undefined;
}

function parseKvKey(text: string): Buffer {
  const key = Buffer.from(text, "base64");
  if (key.length !== 32) {
    throw new OAuthSecretsError(
      `SVC_OAUTH_KV_KEY must be 32 bytes, base64-encoded (e.g. openssl rand -base64 32); it decodes to ${key.length} bytes`,
    );
  }
  return key;
}
