import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Span } from "@opentelemetry/api";
import type { RequestContext } from "../../define/context.ts";
import { type Catalog, findResource, type NamedResource } from "../catalog.ts";
import type { Extra, SessionState } from "../request-context.ts";
import { toResourceResult } from "../results.ts";
import { requestDetails, serverSpanAttributes } from "../span-attributes.ts";

/** JSON-RPC error code the MCP specification gives for an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

function listEntry(d: NamedResource, key: "uri" | "uriTemplate") {
  return {
    [key]: d.uri,
    name: d.name,
    description: d.description,
    ...(d.title ? { title: d.title } : {}),
    ...(d.mimeType ? { mimeType: d.mimeType } : {}),
    ...(d.meta ? { _meta: d.meta } : {}),
  };
}

/** resources/list, templates/list, read, subscribe and unsubscribe. */
export function registerResourceHandlers(
  server: Server,
  catalog: Catalog,
  contextFor: (extra: Extra) => RequestContext,
  state: SessionState,
) {
  const { telemetry } = catalog;
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [...catalog.resources.values()].map((d) => listEntry(d, "uri")) as never,
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: catalog.templates.map((t) => listEntry(t.definition, "uriTemplate")) as never,
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    const found = findResource(catalog, uri);
    if (!found) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    const { definition, params } = found;
    const attributes = { ...serverSpanAttributes("resources/read", extra), "mcp.resource.uri": uri };
    const read = async (span: Span) => {
      telemetry.detail(span, "svc.resource.parameters", params);
      telemetry.detail(span, "svc.request.context", requestDetails(server, extra));
      const value = await definition.read(uri, params, contextFor(extra));
      const result = toResourceResult(value, uri, definition.mimeType);
      telemetry.detail(span, "svc.resource.contents", result.contents);
      return result;
    };
    return telemetry.span("resources/read", "server", attributes, read, request.params._meta);
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    state.subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    state.subscriptions.delete(request.params.uri);
    return {};
  });
}
