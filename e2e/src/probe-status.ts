import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

// The HTTP status a gateway answers for an MCP endpoint: an `initialize` request, the first thing any client
// sends, so a server that requires a session (as framework-built servers do) answers 200 when the gateway lets
// the request through, and 401 / 403 / 404 come from the gateway itself.

export async function probeStatus(
  endpoint: URL | string,
  headers: Record<string, string> = {},
): Promise<number> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "svc-e2e-probe", version: "1.0.0" },
      },
    }),
  });
  await response.body?.cancel();
  return response.status;
}
