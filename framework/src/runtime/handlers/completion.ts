import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CompleteRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Completer } from "../../define/resource.ts";
import type { Catalog } from "../catalog.ts";

/** The MCP limit on values in one completion response. */
const MAX_VALUES = 100;

/** completion/complete for prompt arguments and resource template variables; no completer → no values. */
export function registerCompletionHandler(server: Server, catalog: Catalog) {
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    let completer: Completer | undefined;
    if (ref.type === "ref/prompt") {
      completer = catalog.prompts.get(ref.name)?.run.component.definition.complete?.[argument.name];
    } else {
      const d =
        catalog.resources.get(ref.uri) ??
        catalog.templates.find((t) => t.definition.uri === ref.uri)?.definition;
      completer = d?.complete?.[argument.name];
    }
    const context = { arguments: request.params.context?.arguments ?? {} };
    const all = completer ? await completer(argument.value, context) : [];
    const values = all.slice(0, MAX_VALUES);
    return { completion: { values, total: all.length, hasMore: all.length > values.length } };
  });
}
