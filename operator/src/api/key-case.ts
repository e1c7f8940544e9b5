// The gateway YAML spells keys in snake_case, Kubernetes resources in camelCase. The mapping is purely
// mechanical (`jwks_uri` ↔ `jwksUri`), so it is written once here and checked to round-trip when the CRDs
// are generated, instead of keeping a table of field names that could drift from the gateway's schema.

export function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

export function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Throws when a gateway key would not come back unchanged, so a new field cannot be silently renamed. */
export function assertRoundTrip(snakeKey: string): string {
  const camel = snakeToCamel(snakeKey);
  if (camelToSnake(camel) !== snakeKey) {
    throw new Error(`gateway config key "${snakeKey}" does not map to camelCase and back ("${camel}")`);
  }
  return camel;
}
