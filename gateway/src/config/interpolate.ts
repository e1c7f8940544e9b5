// `${VAR}` and `${VAR:default}` in string values. `$${` writes a literal `${`.
// An unset variable without a default is an error; a variable set to the empty string counts as set.

export interface InterpolatedString {
  value: string;
  /** True when the text held at least one reference (so a plain YAML scalar may need its type resolved again). */
  substituted: boolean;
  problems: string[];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function interpolateString(
  text: string,
  env: Record<string, string | undefined>,
  keepUnsetVariables = false,
): InterpolatedString {
  if (!text.includes("${")) return { value: text, substituted: false, problems: [] };
  let value = "";
  let substituted = false;
  const problems: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      value += "${";
      i += 3;
      continue;
    }
    if (!text.startsWith("${", i)) {
      value += text[i];
      i += 1;
      continue;
    }
    const close = text.indexOf("}", i + 2);
    if (close === -1) {
      problems.push(`unterminated "\${" at character ${i + 1}; write "$\${" for a literal "\${"`);
      value += text.slice(i);
      break;
    }
    const reference = text.slice(i + 2, close);
    const colon = reference.indexOf(":");
    const name = colon === -1 ? reference : reference.slice(0, colon);
    const fallback = colon === -1 ? undefined : reference.slice(colon + 1);
    substituted = true;
    if (!NAME.test(name)) {
      problems.push(
        `"\${${reference}}" is not a valid reference: a variable name is letters, digits and _, not starting with a digit`,
      );
    } else if (env[name] !== undefined) {
      value += env[name];
    } else if (fallback !== undefined) {
      value += fallback;
    } else if (keepUnsetVariables) {
      value += `\${${name}}`;
    } else {
      problems.push(
        `environment variable ${name} is not set (write \${${name}:default} to make it optional)`,
      );
    }
    i = close + 1;
  }
  return { value, substituted, problems };
}

/**
 * How an unquoted YAML value reads once a reference is substituted: `timeout: ${TIMEOUT:30}` is the number 30,
 * `enabled: ${ON:true}` the boolean true, as if written there. Quoted values stay strings.
 */
export function resolvePlainScalar(text: string): string | number | boolean {
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  return text;
}
