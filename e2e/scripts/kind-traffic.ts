// Steady MCP traffic through the gateway while something disruptive happens (a rolling restart of the gateway's
// Deployment in the kind e2e), counting every failed call. Each worker opens an MCP session with a fresh
// client_credentials token, calls the tool --calls-per-session times, closes, and starts over, so both sessions
// and keep-alive connections span the disruption. It prints `traffic flowing` after the first successful call,
// stops when --stop-file appears (or at --max-seconds), and prints one JSON summary line; exit 1 when any call
// failed or when fewer than --min-calls succeeded (traffic that hardly ran would otherwise look clean). A call
// that hangs fails at the MCP client's request timeout.
//   node e2e/scripts/kind-traffic.ts --url http://svc-gateway.svc-gateway.svc --server hello-tools \
//     --token-url http://svc-e2e-idp.svc-gateway.svc:8080/token --client engineer:secret \
//     --resource https://svc-gateway.e2e --tool hello --args '{"name":"traffic"}' --expect traffic \
//     --stop-file /tmp/stop
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import { MCP_CALL_OPTIONS } from "../src/mcp-call-options.ts";

const usage =
  "usage: kind-traffic --url URL --server NAME --token-url URL --client ID:SECRET --resource AUDIENCE\n" +
  "                    --tool T [--args JSON] [--expect TEXT] --stop-file PATH [--workers N]\n" +
  "                    [--calls-per-session N] [--min-calls N] [--max-seconds S] [--pause-ms MS]\n";
const { values } = parseArgs({
  options: {
    ...MCP_CALL_OPTIONS,
    "stop-file": { type: "string" },
    workers: { type: "string", default: "4" },
    "calls-per-session": { type: "string", default: "20" },
    "min-calls": { type: "string", default: "50" },
    "max-seconds": { type: "string", default: "600" },
    "pause-ms": { type: "string", default: "500" },
  },
});
const required = [
  values.url,
  values.server,
  values["token-url"],
  values.client,
  values.resource,
  values.tool,
];
if (required.some((value) => value === undefined) || values["stop-file"] === undefined) {
  process.stderr.write(usage);
  process.exit(2);
}
const endpoint = new URL(`${values.url}/${values.server}/mcp`);
const stopFile = values["stop-file"] as string;
const toolArgs = JSON.parse(values.args ?? "{}") as Record<string, unknown>;
const [clientId = "", ...secret] = (values.client as string).split(":");
const deadline = Date.now() + Number(values["max-seconds"]) * 1000;
// Each worker pauses between calls: steady traffic well under the gateway's default per-user rate limit (1000
// messages a minute; a session adds initialize, its notification and the DELETE), so a refusal means a failure.
const pauseMs = Number(values["pause-ms"]);
/** Distinct failure messages kept for the summary; the count is exact, the examples are bounded. */
const MAX_ERROR_EXAMPLES = 10;

let calls = 0;
let failed = 0;
let stopRequested = false;
const errors = new Set<string>();
const fail = (message: string) => {
  failed++;
  if (errors.size < MAX_ERROR_EXAMPLES) errors.add(message.slice(0, 300));
};

/** Polled between calls (a cheap stat), so a worker stops promptly whatever the event loop is busy with. */
const shouldStop = () => {
  stopRequested ||= Date.now() > deadline || existsSync(stopFile);
  return stopRequested;
};
const pause = () => new Promise((resolve) => setTimeout(resolve, pauseMs));

async function session(): Promise<void> {
  const token = await clientCredentialsToken({
    tokenUrl: values["token-url"] as string,
    clientId,
    clientSecret: secret.join(":"),
    resource: values.resource as string,
  });
  const client = new Client({ name: "kind-traffic", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    for (let index = 0; index < Number(values["calls-per-session"]) && !shouldStop(); index++) {
      const result = await client.callTool({ name: values.tool as string, arguments: toolArgs });
      const text = JSON.stringify(result.content);
      if (result.isError || (values.expect !== undefined && !text.includes(values.expect))) {
        fail(`unexpected result: ${text}`);
        continue;
      }
      calls++;
      if (calls === 1) process.stdout.write(`kind-traffic: ${endpoint}: traffic flowing\n`);
      await pause();
    }
    // Ended with DELETE, as a well-behaved client ends its session: the gateway caps open sessions per user.
    await transport.terminateSession();
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function worker(): Promise<void> {
  while (!shouldStop()) {
    // A session that fails to open or breaks mid-way is a failed call, like one refused outright; the worker
    // pauses before the next attempt rather than spinning on a gateway that is down.
    await session().catch(async (error: Error) => {
      const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
      fail(`${error.message}${cause}`);
      await pause();
    });
  }
}

await Promise.all(Array.from({ length: Number(values.workers) }, () => worker()));

const summary = { endpoint: endpoint.href, calls, failed, errors: [...errors] };
process.stdout.write(`${JSON.stringify(summary)}\n`);
const tooFew = calls < Number(values["min-calls"]);
if (failed > 0 || tooFew) {
  process.stderr.write(
    `kind-traffic: ${failed} failed call(s)${tooFew ? `, only ${calls} succeeded (at least ${values["min-calls"]} expected)` : ""}\n`,
  );
  process.exit(1);
}
