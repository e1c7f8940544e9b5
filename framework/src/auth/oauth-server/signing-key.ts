import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, type JWK } from "jose";
import { AuthConfigError } from "../errors.ts";

/** The key that signs the built-in OAuth server's access tokens, and its public JWK (served at jwks_uri). */
export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  alg: "RS256" | "ES256" | "ES384" | "EdDSA";
  kid: string;
  publicJwk: JWK;
  /** True when generated at start (development without a configured key). */
  ephemeral: boolean;
}

function algorithmFor(key: KeyObject, where: string): SigningKey["alg"] {
  const type = key.asymmetricKeyType;
  if (type === "rsa") {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw new AuthConfigError(where, `RSA keys must be at least 2048 bits (got ${bits})`);
    return "RS256";
  }
  if (type === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === "prime256v1") return "ES256";
    if (curve === "secp384r1") return "ES384";
    throw new AuthConfigError(where, `EC curve ${curve ?? "unknown"} is not supported (use P-256 or P-384)`);
  }
  if (type === "ed25519") return "EdDSA";
  throw new AuthConfigError(
    where,
    `key type ${type ?? "unknown"} is not supported (use RSA, EC P-256/P-384 or Ed25519)`,
  );
}

async function describe(privateKey: KeyObject, where: string, ephemeral: boolean): Promise<SigningKey> {
  const alg = algorithmFor(privateKey, where);
  const publicKey = createPublicKey(privateKey);
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return { privateKey, publicKey, alg, kid, publicJwk: { ...publicJwk, kid, alg, use: "sig" }, ephemeral };
}

/**
 * Loads the signing key from the environment variable `envVar` (a PEM private key, PKCS#8 or traditional).
 * Unset: in development a key is generated for this process only (tokens die with it); otherwise the server
 * refuses to start, because tokens signed by a throwaway key would break on every restart and replica.
 */
export async function loadSigningKey(
  envVar: string,
  value: string | undefined,
  development: boolean,
): Promise<SigningKey> {
  if (value === undefined || value.trim() === "") {
    if (!development) {
      throw new AuthConfigError(
        envVar,
        "is not set: the OAuth server needs a PEM private key to sign access tokens (e.g. `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`). Set NODE_ENV=development to use a temporary key instead.",
      );
    }
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return describe(privateKey, envVar, true);
  }
  const pem = value.includes("\\n") ? value.replaceAll("\\n", "\n") : value;
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new AuthConfigError(envVar, `is not a valid PEM private key: ${(error as Error).message}`);
  }
  return describe(privateKey, envVar, false);
}
