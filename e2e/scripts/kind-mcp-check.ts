// MCP checks for the kind e2e, through a port-forward to the gateway Service. Retries until the expectation
// holds or the timeout passes (the kubelet takes up to a minute or two to refresh a ConfigMap volume).
// With --token-url it first gets an access token (client_credentials, as a real client of the identity
// provider would) and sends it as `Authorization: Bearer`; a fresh token on every attempt.
//   node e2e/scripts/kind-mcp-check.ts --url http://127.0.0.1:18080 --server hello-tools \
//     --token-url http://127.0.0.1:18081/token --client engineer:secret --resource https://svc-gateway.e2e \
//     --tool hello --args '{"name":"kind"}' --expect kind
//   node e2e/scripts/kind-mcp-check.ts --url ... --server hello-tools [--token-url ...] --expect-status 403
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import { MCP_CALL_OPTIONS } from "../src/mcp-call-options.ts";
import { probeStatus } from "../src/probe-status.ts";

const usage =
  "usage: kind-mcp-check --url URL --server NAME [--token-url URL --client ID:SECRET --resource AUDIENCE]\n" +
  "                      (--tool T [--args JSON] [--expect TEXT] | --expect-status CODE) [--timeout SECONDS]\n";
const { values } = parseArgs({
  options: {
    ...MCP_CALL_OPTIONS,
    "expect-status": { type: "string" },
    timeout: { type: "string", default: "180" },
  },
});
const tokenOptions = [values["token-url"], values.client, values.resource];
const tokenOptionsComplete = tokenOptions.every((value) => value !== undefined);
if (
  !values.url ||
  !values.server ||
  (!values.tool && !values["expect-status"]) ||
  (!tokenOptionsComplete && tokenOptions.some((value) => value !== undefined))
) {
  process.stderr.write(usage);
  process.exit(2);
}
const endpoint = new URL(`${values.url}/${values.server}/mcp`);
const started = Date.now();
const deadline = started + Number(values.timeout) * 1000;

/** `Authorization` for this attempt: a new client_credentials token, or none without --token-url. */
async function authorization(): Promise<Record<string, string>> {
  if (!tokenOptionsComplete) return {};
  const [clientId = "", ...secret] = (values.client as string).split(":");
  const token = await clientCredentialsToken({
    tokenUrl: values["token-url"] as string,
    clientId,
    clientSecret: secret.join(":"),
    resource: values.resource as string,
  });
  return { authorization: `Bearer ${token}` };
}

async function callTool(): Promise<string> {
  const client = new Client({ name: "kind-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: await authorization() } }),
  );
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

let last = "";
let met = false;
while (!met && Date.now() < deadline) {
  try {
    if (values["expect-status"]) {
      const status = await probeStatus(endpoint, await authorization());
      last = `HTTP ${status}`;
      met = String(status) === values["expect-status"];
    } else {
      last = await callTool();
      met = !values.expect || last.includes(values.expect);
    }
  } catch (error) {
    last = (error as Error).message;
  }
  if (!met) await new Promise((resolve) => setTimeout(resolve, 2000));
}
if (!met) {
  process.stderr.write(
    `kind-mcp-check: ${endpoint}: expectation not met within ${values.timeout}s; last: ${last}\n`,
  );
  process.exit(1);
}
const elapsed = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(`kind-mcp-check: ${endpoint}: ok after ${elapsed} s (${last.slice(0, 200)})\n`);
