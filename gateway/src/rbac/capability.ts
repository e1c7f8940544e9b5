/** What a request touches, in the form capability_overrides patterns are written: `tools/<name>` etc. */
export interface Capability {
  kind: "tools" | "resources" | "prompts";
  /** Tool or prompt name, or resource URI. */
  name: string;
}

export function capabilityKey(capability: Capability): string {
  return `${capability.kind}/${capability.name}`;
}

/** The capability a JSON-RPC request acts on, or undefined for methods that touch none (initialize, ping, lists). */
export function capabilityOfRequest(method: string, params: unknown): Capability | undefined {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  switch (method) {
    case "tools/call": {
      const name = text(p.name);
      return name === undefined ? undefined : { kind: "tools", name };
    }
    case "prompts/get": {
      const name = text(p.name);
      return name === undefined ? undefined : { kind: "prompts", name };
    }
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe": {
      const uri = text(p.uri);
      return uri === undefined ? undefined : { kind: "resources", name: uri };
    }
    default:
      return undefined;
  }
}
