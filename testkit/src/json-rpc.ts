// Raw JSON-RPC over HTTP, for the tests that check what an MCP SDK client would hide: status codes, challenges and
// headers of a server's or gateway's answer to one POST (framework and gateway tests, and the e2e probes).

export function initializeRequest(id: number | string = 1) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
}

/** POSTs `body` as JSON with the Accept header Streamable HTTP requires, plus `headers`. */
export function postJsonRpc(
  url: string | URL,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}
