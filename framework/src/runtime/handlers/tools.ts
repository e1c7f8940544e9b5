import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Span } from "@opentelemetry/api";
import type { RequestContext } from "../../define/context.ts";
import { type Catalog, describeIssues } from "../catalog.ts";
import type { Extra } from "../request-context.ts";
import { toToolResult } from "../results.ts";
import { requestDetails, serverSpanAttributes } from "../span-attributes.ts";

/** tools/list and tools/call: arguments validated, errors as isError results, one span per call. */
export function registerToolHandlers(
  server: Server,
  catalog: Catalog,
  contextFor: (extra: Extra) => RequestContext,
) {
  const { telemetry } = catalog;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...catalog.tools.values()].map((t) => t.list) as never,
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = catalog.tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const attributes = {
      ...serverSpanAttributes("tools/call", extra),
      "gen_ai.tool.name": name,
      "gen_ai.operation.name": "execute_tool",
    };
    const call = async (span: Span): Promise<CallToolResult> => {
      const raw = request.params.arguments ?? {};
      telemetry.detail(span, "gen_ai.tool.call.arguments", raw);
      telemetry.detail(span, "svc.request.context", requestDetails(server, extra));
      let args: Record<string, unknown> = raw;
      if (tool.validate) {
        const parsed = tool.validate.safeParse(raw);
        if (!parsed.success) {
          span.setAttribute("error.type", "invalid_arguments");
          const text = `Invalid arguments for tool ${name}: ${describeIssues(parsed.error)}`;
          return { isError: true, content: [{ type: "text", text }] };
        }
        args = parsed.data as Record<string, unknown>;
      }
      let result: CallToolResult;
      let thrown = false;
      try {
        const handler = tool.run.component.definition.handler as (a: unknown, c: RequestContext) => unknown;
        result = toToolResult((await handler(args, contextFor(extra))) as never);
      } catch (error) {
        if (error instanceof McpError) throw error;
        thrown = true;
        span.recordException(error as Error);
        span.setAttribute("error.type", (error as Error).name || "Error");
        result = {
          isError: true,
          content: [{ type: "text", text: (error as Error).message || String(error) }],
        };
      }
      if (result.isError) {
        // Semantic conventions: a tool's isError result is an error of type tool_error unless one is known.
        span.setStatus({ code: 2, message: "tool returned isError" });
        if (!thrown) span.setAttribute("error.type", "tool_error");
      }
      telemetry.detail(span, "gen_ai.tool.call.result", result);
      return result;
    };
    return telemetry.span(`tools/call ${name}`, "server", attributes, call, request.params._meta);
  });
}
