import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RequestContext } from "../define/context.ts";
import type { Completer, ResourceDefinition } from "../define/resource.ts";
import type { Settings } from "../project/settings.ts";
import type { Registry } from "./registry.ts";
import { toPromptResult, toResourceResult, toToolResult } from "./results.ts";
import type { Telemetry } from "./telemetry.ts";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const LEVELS = LoggingLevelSchema.options;

/** Everything computed once from the registry and shared by every session's Server. */
export interface Catalog {
  settings: Settings;
  registry: Registry;
  telemetry: Telemetry;
  tools: Map<
    string,
    { list: Record<string, unknown>; validate?: z.ZodObject; run: Registry["tools"][number] }
  >;
  resources: Map<string, ResourceDefinition & { name: string }>;
  templates: { template: UriTemplate; definition: ResourceDefinition & { name: string } }[];
  prompts: Map<
    string,
    { list: Record<string, unknown>; validate: z.ZodObject; run: Registry["prompts"][number] }
  >;
}

function jsonSchemaOf(schema: z.ZodObject): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
}

export function buildCatalog(settings: Settings, registry: Registry, telemetry: Telemetry): Catalog {
  const catalog: Catalog = {
    settings,
    registry,
    telemetry,
    tools: new Map(),
    resources: new Map(),
    templates: [],
    prompts: new Map(),
  };
  for (const tool of registry.tools) {
    const d = tool.component.definition;
    const validate = "inputSchema" in d ? undefined : z.object(d.input ?? {});
    const inputSchema = "inputSchema" in d ? d.inputSchema : jsonSchemaOf(validate as z.ZodObject);
    const list: Record<string, unknown> = { name: tool.name, description: d.description, inputSchema };
    if (d.title) list.title = d.title;
    if (d.annotations) list.annotations = d.annotations;
    if (d.meta) list._meta = d.meta;
    catalog.tools.set(tool.name, validate ? { list, validate, run: tool } : { list, run: tool });
  }
  for (const resource of registry.resources) {
    const d = { ...resource.component.definition, name: resource.name };
    if (/\{[^}]+\}/.test(d.uri)) catalog.templates.push({ template: new UriTemplate(d.uri), definition: d });
    else catalog.resources.set(d.uri, d);
  }
  for (const prompt of registry.prompts) {
    const d = prompt.component.definition;
    const shape = d.arguments ?? {};
    const args = Object.entries(shape).map(([name, schema]) => ({
      name,
      ...(schema.description ? { description: schema.description } : {}),
      required: !schema.safeParse(undefined).success,
    }));
    const list: Record<string, unknown> = { name: prompt.name, description: d.description, arguments: args };
    if (d.title) list.title = d.title;
    if (d.meta) list._meta = d.meta;
    catalog.prompts.set(prompt.name, { list, validate: z.object(shape), run: prompt });
  }
  return catalog;
}

function resourceListEntry(d: ResourceDefinition & { name: string }, key: "uri" | "uriTemplate") {
  return {
    [key]: d.uri,
    name: d.name,
    description: d.description,
    ...(d.title ? { title: d.title } : {}),
    ...(d.mimeType ? { mimeType: d.mimeType } : {}),
    ...(d.meta ? { _meta: d.meta } : {}),
  };
}

function zodMessage(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`).join("; ");
}

/** A fresh low-level MCP Server for one session (or one stateless request), wired to the shared catalog. */
export function createMcpServer(catalog: Catalog): Server {
  const { settings, telemetry } = catalog;
  const server = new Server(
    { name: settings.name, version: settings.version },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        logging: {},
        completions: {},
      },
      ...(settings.description ? { instructions: settings.description } : {}),
    },
  );
  let logLevel: LoggingLevel | undefined;
  const subscriptions = new Set<string>();

  // Server-initiated requests carry the active span's traceparent in _meta, so a traced client can join the trace.
  const withTraceContext = <P extends { _meta?: Record<string, unknown> }>(params: P): P => {
    const meta = telemetry.inject(params._meta);
    return meta && Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params;
  };

  const context = (extra: Extra): RequestContext => ({
    signal: extra.signal,
    sessionId: extra.sessionId,
    authInfo: extra.authInfo as AuthInfo | undefined,
    async log(level, data, logger) {
      if (logLevel && LEVELS.indexOf(level) < LEVELS.indexOf(logLevel)) return;
      await extra.sendNotification({
        method: "notifications/message",
        params: { level, data, ...(logger ? { logger } : {}) },
      });
    },
    async progress(progress, total, message) {
      const progressToken = extra._meta?.progressToken;
      if (progressToken === undefined) return;
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken,
          progress,
          ...(total !== undefined ? { total } : {}),
          ...(message ? { message } : {}),
        },
      });
    },
    elicit(params) {
      if (!server.getClientCapabilities()?.elicitation) {
        throw new McpError(ErrorCode.InvalidRequest, "The client does not support elicitation");
      }
      return telemetry.span(
        "elicitation/create",
        "client",
        { "mcp.method.name": "elicitation/create" },
        async (span) => {
          telemetry.detail(span, "svc.elicitation.request", params);
          const result = await extra.sendRequest(
            { method: "elicitation/create", params: withTraceContext(params) },
            ElicitResultSchema,
          );
          span.setAttribute("svc.elicitation.action", result.action);
          telemetry.detail(span, "svc.elicitation.result", result);
          return result;
        },
      );
    },
    sample(params) {
      if (!server.getClientCapabilities()?.sampling) {
        throw new McpError(ErrorCode.InvalidRequest, "The client does not support sampling");
      }
      const attributes = { "mcp.method.name": "sampling/createMessage", "gen_ai.operation.name": "chat" };
      return telemetry.span("sampling/createMessage", "client", attributes, async (span) => {
        telemetry.detail(span, "svc.sampling.request", params);
        const result = await extra.sendRequest(
          { method: "sampling/createMessage", params: withTraceContext(params) },
          CreateMessageResultSchema,
        );
        span.setAttribute("gen_ai.response.model", result.model);
        telemetry.detail(span, "svc.sampling.result", result);
        return result;
      });
    },
    closeStream() {
      extra.closeSSEStream?.();
    },
    async resourceUpdated(uri) {
      if (subscriptions.has(uri)) await server.sendResourceUpdated({ uri });
    },
  });

  const baseAttributes = (method: string, extra: Extra) => {
    const version = extra.requestInfo?.headers["mcp-protocol-version"];
    return {
      "mcp.method.name": method,
      "jsonrpc.request.id": String(extra.requestId),
      "network.transport": "tcp",
      "network.protocol.name": "http",
      ...(typeof version === "string" ? { "mcp.protocol.version": version } : {}),
      ...(extra.sessionId ? { "mcp.session.id": extra.sessionId } : {}),
    };
  };

  // detailed_tracing "request context": who called and in which session, never the credential itself.
  const requestContext = (extra: Extra) => ({
    sessionId: extra.sessionId,
    clientId: extra.authInfo?.clientId,
    scopes: extra.authInfo?.scopes,
    clientInfo: server.getClientVersion(),
  });

  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    logLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...catalog.tools.values()].map((t) => t.list) as never,
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = catalog.tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const attributes = {
      ...baseAttributes("tools/call", extra),
      "gen_ai.tool.name": name,
      "gen_ai.operation.name": "execute_tool",
    };
    return telemetry.span(
      `tools/call ${name}`,
      "server",
      attributes,
      async (span) => {
        const raw = request.params.arguments ?? {};
        telemetry.detail(span, "gen_ai.tool.call.arguments", raw);
        telemetry.detail(span, "svc.request.context", requestContext(extra));
        let args: Record<string, unknown> = raw;
        if (tool.validate) {
          const parsed = tool.validate.safeParse(raw);
          if (!parsed.success) {
            span.setAttribute("error.type", "invalid_arguments");
            return {
              isError: true,
              content: [
                { type: "text", text: `Invalid arguments for tool ${name}: ${zodMessage(parsed.error)}` },
              ],
            };
          }
          args = parsed.data as Record<string, unknown>;
        }
        let result: ReturnType<typeof toToolResult>;
        let thrown = false;
        try {
          const handler = tool.run.component.definition.handler as (a: unknown, c: RequestContext) => unknown;
          result = toToolResult((await handler(args, context(extra))) as never);
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
      },
      request.params._meta,
    );
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [...catalog.resources.values()].map((d) => resourceListEntry(d, "uri")) as never,
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: catalog.templates.map((t) => resourceListEntry(t.definition, "uriTemplate")) as never,
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    let definition = catalog.resources.get(uri);
    let params: Record<string, string> = {};
    if (!definition) {
      for (const { template, definition: candidate } of catalog.templates) {
        const match = template.match(uri);
        if (match) {
          definition = candidate;
          params = Object.fromEntries(
            Object.entries(match).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
          );
          break;
        }
      }
    }
    if (!definition) throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
    const found = definition;
    const attributes = { ...baseAttributes("resources/read", extra), "mcp.resource.uri": uri };
    return telemetry.span(
      "resources/read",
      "server",
      attributes,
      async (span) => {
        telemetry.detail(span, "svc.resource.parameters", params);
        telemetry.detail(span, "svc.request.context", requestContext(extra));
        const result = toResourceResult(await found.read(uri, params, context(extra)), uri, found.mimeType);
        telemetry.detail(span, "svc.resource.contents", result.contents);
        return result;
      },
      request.params._meta,
    );
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [...catalog.prompts.values()].map((p) => p.list) as never,
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const prompt = catalog.prompts.get(name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    const attributes = { ...baseAttributes("prompts/get", extra), "gen_ai.prompt.name": name };
    return telemetry.span(
      `prompts/get ${name}`,
      "server",
      attributes,
      async (span) => {
        telemetry.detail(span, "svc.prompt.arguments", request.params.arguments ?? {});
        telemetry.detail(span, "svc.request.context", requestContext(extra));
        const parsed = prompt.validate.safeParse(request.params.arguments ?? {});
        if (!parsed.success) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Invalid arguments for prompt ${name}: ${zodMessage(parsed.error)}`,
          );
        }
        const d = prompt.run.component.definition;
        const result = toPromptResult(await d.render(parsed.data as never, context(extra)), d.description);
        telemetry.detail(span, "svc.prompt.messages", result.messages);
        return result;
      },
      request.params._meta,
    );
  });

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
    const all = completer
      ? await completer(argument.value, { arguments: request.params.context?.arguments ?? {} })
      : [];
    const values = all.slice(0, 100);
    return { completion: { values, total: all.length, hasMore: all.length > values.length } };
  });

  return server;
}
