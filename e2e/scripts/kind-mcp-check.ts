// MCP checks for the kind e2e, through a port-forward to the gateway Service. Retries until the expectation
// holds or the timeout passes (the kubelet takes up to a minute or two to refresh a ConfigMap volume).
//   node e2e/scripts/kind-mcp-check.ts --url http://127.0.0.1:18080 --server hello-tools \
//     --tool hello --args '{"name":"kind"}' --expect kind
//   node e2e/scripts/kind-mcp-check.ts --url ... --server hello-tools --expect-status 404
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    server: { type: "string" },
    tool: { type: "string" },
    args: { type: "string", default: "{}" },
    expect: { type: "string" },
    "expect-status": { type: "string" },
    timeout: { type: "string", default: "180" },
  },
});
if (!values.url || !values.server || (!values.tool && !values["expect-status"])) {
  process.stderr.write(
    "usage: kind-mcp-check --url URL --server NAME (--tool T [--args JSON] [--expect TEXT] | --expect-status CODE)\n",
  );
  process.exit(2);
}
const endpoint = new URL(`${values.url}/${values.server}/mcp`);
const deadline = Date.now() + Number(values.timeout) * 1000;

async function callTool(): Promise<string> {
  const client = new Client({ name: "kind-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  try {
    const result = await client.callTool({
      name: values.tool as string,
      arguments: JSON.parse(values.args ?? "{}"),
    });
    return JSON.stringify(result.content);
  } finally {
    await client.close();
  }
}

async function statusOf(): Promise<number> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await response.body?.cancel();
  return response.status;
}

let last = "";
while (Date.now() < deadline) {
  try {
    if (values["expect-status"]) {
      const status = await statusOf();
      last = `HTTP ${status}`;
      if (String(status) === values["expect-status"]) break;
    } else {
      last = await callTool();
      if (!values.expect || last.includes(values.expect)) break;
    }
  } catch (error) {
    last = (error as Error).message;
  }
  await new Promise((resolve) => setTimeout(resolve, 2000));
}
if (Date.now() >= deadline) {
  process.stderr.write(
    `kind-mcp-check: ${endpoint}: expectation not met within ${values.timeout}s; last: ${last}\n`,
  );
  process.exit(1);
}
process.stdout.write(`kind-mcp-check: ${endpoint}: ok (${last.slice(0, 200)})\n`);
