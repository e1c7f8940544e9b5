import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Span } from "@opentelemetry/api";
import type { RequestContext } from "../../define/context.ts";
import { type Catalog, describeIssues } from "../catalog.ts";
import type { Extra } from "../request-context.ts";
import { toPromptResult } from "../results.ts";
import { requestDetails, serverSpanAttributes } from "../span-attributes.ts";

/** prompts/list and prompts/get (invalid arguments are a JSON-RPC InvalidParams error). */
export function registerPromptHandlers(
  server: Server,
  catalog: Catalog,
  contextFor: (extra: Extra) => RequestContext,
) {
  const { telemetry } = catalog;
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [...catalog.prompts.values()].map((p) => p.list) as never,
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const prompt = catalog.prompts.get(name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const attributes = { ...serverSpanAttributes("prompts/get", extra), "gen_ai.prompt.name": name };
    const get = async (span: Span) => {
      const raw = request.params.arguments ?? {};
      telemetry.detail(span, "svc.prompt.arguments", raw);
      telemetry.detail(span, "svc.request.context", requestDetails(server, extra));
      const parsed = prompt.validate.safeParse(raw);
      if (!parsed.success) {
        const message = `Invalid arguments for prompt ${name}: ${describeIssues(parsed.error)}`;
        throw new McpError(ErrorCode.InvalidParams, message);
      }
      const d = prompt.run.component.definition;
      const result = toPromptResult(await d.render(parsed.data as never, contextFor(extra)), d.description);
      telemetry.detail(span, "svc.prompt.messages", result.messages);
      return result;
    };
    return telemetry.span(`prompts/get ${name}`, "server", attributes, get, request.params._meta);
  });
}
