import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { RequestContext } from "../define/context.ts";
import type { Telemetry } from "./telemetry.ts";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What one session remembers between requests. */
export interface SessionState {
  logLevel: LoggingLevel | undefined;
  subscriptions: Set<string>;
}

const LEVELS = LoggingLevelSchema.options;

/** Builds the `context` argument handlers get, bound to this request and this session's server. */
export function contextFactory(
  server: Server,
  telemetry: Telemetry,
  state: SessionState,
): (extra: Extra) => RequestContext {
  // Server-initiated requests carry the active span's traceparent in _meta, so a traced client can join the trace.
  const withTraceContext = <P extends { _meta?: Record<string, unknown> }>(params: P): P => {
    const meta = telemetry.inject(params._meta);
    return meta && Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params;
  };

  return (extra) => ({
    signal: extra.signal,
    sessionId: extra.sessionId,
    authInfo: extra.authInfo as AuthInfo | undefined,
    async log(level, data, logger) {
      if (state.logLevel && LEVELS.indexOf(level) < LEVELS.indexOf(state.logLevel)) return;
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
      const attributes = { "mcp.method.name": "elicitation/create" };
      return telemetry.span("elicitation/create", "client", attributes, async (span) => {
        telemetry.detail(span, "svc.elicitation.request", params);
        const result = await extra.sendRequest(
          { method: "elicitation/create", params: withTraceContext(params) },
          ElicitResultSchema,
        );
        span.setAttribute("svc.elicitation.action", result.action);
        telemetry.detail(span, "svc.elicitation.result", result);
        return result;
      });
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
      if (state.subscriptions.has(uri)) await server.sendResourceUpdated({ uri });
    },
  });
}
