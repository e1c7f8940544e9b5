// The MCP request every bench tool sends to an echo tool, and the headers of a streamable-HTTP client: one copy, so
// the bench, the profilers and the A/B scripts measure the same call.
export const ECHO_TEXT = "hello from the bench";

/** `tools/call` of the upstreams' `echo` tool; a distinct id per call where a stateful peer needs one. */
export function echoCall(id = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: ECHO_TEXT } },
  });
}

export const MCP_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};
