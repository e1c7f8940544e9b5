import type { CapabilityKind } from "../mcp/canonical-form.ts";

/** What a request touches, in the form capability_overrides patterns are written: `tools/<name>` etc. */
export interface Capability {
  kind: CapabilityKind;
  /** Tool or prompt name, or resource URI (or URI template), as the client sent it. */
  name: string;
}

export function capabilityKey(capability: Capability): string {
  return `${capability.kind}/${capability.name}`;
}

/** What a message says about the capability it acts on. `field` names the param, for error messages. */
export type NamedCapability =
  /** The method touches none (initialize, ping, lists, tasks, notifications). */
  | { status: "none" }
  | { status: "named"; capability: Capability; field: string }
  /** The method names one, but the param is missing, not a string or empty. */
  | { status: "missing"; problem: string };

/**
 * The capability a JSON-RPC request acts on, for every method that names one: tools/call and prompts/get
 * (`params.name`), resources/read, resources/subscribe and resources/unsubscribe (`params.uri`), and
 * completion/complete (`params.ref`: a `ref/prompt` completes a prompt's argument, a `ref/resource` a resource
 * template's variable; the completions can reveal what the prompt or resource holds).
 */
export function capabilityOfRequest(method: string, params: unknown): NamedCapability {
  switch (method) {
    case "tools/call":
      return named(method, "tools", field(params, "name"), "params.name");
    case "prompts/get":
      return named(method, "prompts", field(params, "name"), "params.name");
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return named(method, "resources", field(params, "uri"), "params.uri");
    case "completion/complete": {
      const ref = field(params, "ref");
      const type = field(ref, "type");
      if (type === "ref/prompt") return named(method, "prompts", field(ref, "name"), "params.ref.name");
      if (type === "ref/resource") return named(method, "resources", field(ref, "uri"), "params.ref.uri");
      return {
        status: "missing",
        problem: `${method}: params.ref.type must be "ref/prompt" or "ref/resource"`,
      };
    }
    default:
      return { status: "none" };
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function named(method: string, kind: CapabilityKind, value: unknown, path: string): NamedCapability {
  if (typeof value === "string" && value !== "")
    return { status: "named", capability: { kind, name: value }, field: path };
  const what =
    value === undefined ? "is missing" : typeof value !== "string" ? "is not a string" : "is empty";
  return { status: "missing", problem: `${method}: ${path} ${what}` };
}
