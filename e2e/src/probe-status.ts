import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";

// The HTTP status a gateway answers for an MCP endpoint: an `initialize` request, the first thing any client
// sends, so a server that requires a session (as framework-built servers do) answers 200 when the gateway lets
// the request through, and 401 / 403 / 404 come from the gateway itself.

export async function probeStatus(
  endpoint: URL | string,
  headers: Record<string, string> = {},
): Promise<number> {
  const response = await postJsonRpc(endpoint, initializeRequest(), headers);
  await response.body?.cancel();
  return response.status;
}
