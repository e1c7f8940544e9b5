// Tool annotations per upstream server, learnt from the tools/list results the gateway relays (before filtering)
// and forgotten on notifications/tools/list_changed. The capability defaults of gateway_policy.capability_rbac
// need them to decide a tools/call; a tool whose hints are unknown is decided closed (see UNKNOWN_TOOL_HINTS).
import type { ToolHints } from "./decide.ts";

/**
 * Hints assumed for a tool the gateway has not seen listed: the most restrictive category (`destructive`), so a
 * call before any tools/list, or of a tool the server never listed, cannot slip through a looser default.
 */
export const UNKNOWN_TOOL_HINTS: Readonly<ToolHints> = Object.freeze({ destructiveHint: true });

/** Bounded per server so an upstream listing endless tools cannot grow the gateway's memory without limit. */
const MAX_TOOLS_PER_SERVER = 10_000;

export class ToolHintsCache {
  readonly #byServer = new Map<string, Map<string, ToolHints>>();

  hintsFor(server: string, tool: string): ToolHints {
    return this.#byServer.get(server)?.get(tool) ?? UNKNOWN_TOOL_HINTS;
  }

  /** Records the tools of a tools/list result (one page of it: pages add up until the list changes). */
  observe(server: string, result: unknown): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    let known = this.#byServer.get(server);
    if (known === undefined) {
      known = new Map();
      this.#byServer.set(server, known);
    }
    for (const tool of tools) {
      const name = (tool as { name?: unknown } | null)?.name;
      if (typeof name !== "string" || known.size >= MAX_TOOLS_PER_SERVER) continue;
      const annotations = (tool as { annotations?: ToolHints }).annotations;
      known.set(name, {
        readOnlyHint: annotations?.readOnlyHint === true,
        destructiveHint: annotations?.destructiveHint === true,
      });
    }
  }

  /** notifications/tools/list_changed: what was learnt may be stale, so unknown (closed) until listed again. */
  forget(server: string): void {
    this.#byServer.delete(server);
  }
}
