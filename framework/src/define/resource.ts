import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { RequestContext } from "./context.ts";

/** A string (text), bytes (blob), a full ReadResourceResult, or any JSON value (serialized as application/json). */
export type ResourceReturn = string | Uint8Array | ReadResourceResult | Record<string, unknown> | unknown[];

/** Suggests values for one argument from what the user typed so far. */
export type Completer = (
  value: string,
  context: { arguments: Record<string, string> },
) => string[] | Promise<string[]>;

export interface ResourceDefinition {
  /** A fixed URI (`docs://readme`) or an RFC 6570 template (`users://{id}/profile`). */
  uri: string;
  /** Overrides the name derived from the file path. */
  name?: string;
  title?: string;
  description: string;
  mimeType?: string;
  /** `params` holds the template variables (empty for a fixed URI). */
  read: (
    uri: string,
    params: Record<string, string>,
    context: RequestContext,
  ) => ResourceReturn | Promise<ResourceReturn>;
  /** Completions for template variables. */
  complete?: Record<string, Completer>;
  meta?: Record<string, unknown>;
}

export interface ResourceComponent {
  readonly kind: "resource";
  readonly definition: ResourceDefinition;
}

export function defineResource(definition: ResourceDefinition): ResourceComponent {
  return { kind: "resource", definition };
}
