// Which gateway config fields hold secrets. In a custom resource such a field is never a literal value: it
// is `{ secretKeyRef: { name, key } }`, and the rendered YAML says `${VAR}` with VAR filled from the Secret
// in the gateway pod's environment. Matching by name keeps this rule in one place for every kind.
const SECRET_FIELD = /(^|_)(secret|api_key|management_key|password|token)$/;

export function isSecretField(snakeKey: string): boolean {
  return SECRET_FIELD.test(snakeKey);
}

// Maps whose every value is a secret: HTTP headers sent to an exporter or a detector carry credentials
// (authorization, api keys) more often than not, so each value is a secretKeyRef as well.
const SECRET_MAP = /(^|_)headers$/;

export function isSecretMap(snakeKey: string): boolean {
  return SECRET_MAP.test(snakeKey);
}
