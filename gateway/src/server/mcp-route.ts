// /{server}/mcp straight on node:http. It is the gateway's hot path: through Hono, every proxied call also paid for
// a web Request (and its URL), Hono's router and Context, and a Response the adapter took apart again, about a
// tenth of what a call allocates. Here the pipeline runs on the IncomingMessage/ServerResponse and its answer's
// parts are written as they are. Only a plain request target takes this way; anything unusual (percent-encoding,
// dot segments, an absolute-form target, an odd Host) goes to Hono, whose `/:server/mcp` route runs the same
// pipeline, so the two can never disagree about an edge case.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorResponseParts } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Logger } from "../log/logger.ts";
import { handleMcpRequest, type McpPipelineDeps } from "../pipeline/mcp-pipeline.ts";
import type { ProxyAnswer } from "../proxy/proxy-answer.ts";

/** `/{server}/mcp`, optionally with a query: a server name of unreserved characters, no dot segment, no `%`. */
const PLAIN_MCP_TARGET = /^\/([\w~-][\w.~-]*)\/mcp(?:\?[\w!$&'()*+,;=:@/?.~-]*)?$/;
/** A Host of a name or IPv4 address and a port, which needs no URL parser to be understood. */
const PLAIN_HOST = /^[a-z0-9.-]+(?::\d{1,5})?$/;
/**
 * How long a request body the pipeline refused without reading it (a 401, a 404...) may still arrive after the
 * answer. Node discards the rest to keep the connection, which a client could otherwise stretch for ever.
 */
const UNREAD_BODY_GRACE_MS = 500;

/** The server name when the request takes the direct route, else undefined (Hono serves it). */
export function plainMcpServer(request: IncomingMessage): string | undefined {
  const host = request.headers.host;
  if (host === undefined || !PLAIN_HOST.test(host)) return undefined;
  return PLAIN_MCP_TARGET.exec(request.url ?? "")?.[1];
}

/** The pipeline on one request the direct route took; whatever it answers is written out, failures included. */
export function serveMcpRequest(
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  server: string,
  deps: McpPipelineDeps,
): void {
  handleMcpRequest({ incoming, outgoing, server }, deps)
    .then((answer) => writeAnswer(incoming, outgoing, answer))
    .catch((error: unknown) => {
      if (outgoing.headersSent) {
        deps.logger.error("unhandled error", { error });
        outgoing.destroy();
        return;
      }
      writeAnswer(incoming, outgoing, unhandledErrorAnswer(deps.logger, error));
    });
}

/** What any route answers for an error nobody handled: logged, and a bare internal error for the client. */
export function unhandledErrorAnswer(logger: Logger, error: unknown): ProxyAnswer {
  logger.error("unhandled error", { error });
  return errorResponseParts(new GatewayError("internal", "Internal gateway error"), {
    requestId: randomUUID(),
  });
}

function writeAnswer(incoming: IncomingMessage, outgoing: ServerResponse, answer: ProxyAnswer): void {
  if (answer.sent) return;
  const { body, headers } = answer;
  // The answer's headers are its own (built for this request): a known length goes in with them, so Node sends
  // Content-Length instead of chunked framing.
  if (body !== null) headers["content-length"] = String(Buffer.byteLength(body));
  outgoing.writeHead(answer.status, headers);
  outgoing.end(body ?? undefined);
  if (!incoming.complete) closeAfterGrace(incoming);
}

function closeAfterGrace(incoming: IncomingMessage): void {
  const timer = setTimeout(() => incoming.socket.destroy(), UNREAD_BODY_GRACE_MS);
  timer.unref();
  incoming.once("end", () => clearTimeout(timer));
}
