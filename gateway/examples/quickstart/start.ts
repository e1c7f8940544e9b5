// `npm start`: the example MCP server and the gateway in front of it, on embedded defaults (in-memory KV
// store, no Redis). Prints the URL to paste into an MCP client. Ctrl-C stops both.
import { fileURLToPath } from "node:url";
import { startGateway } from "../../src/server/start-gateway.ts";
import { startExampleUpstream } from "./upstream-server.ts";

const upstream = await startExampleUpstream();
const gateway = await startGateway({
  configPath: fileURLToPath(new URL("./config.yaml", import.meta.url)),
  host: "127.0.0.1",
  env: {
    SVC_DRAIN_DELAY_SECONDS: "0", // nothing routes to a laptop: stop at once on Ctrl-C
    // The demo has no identity provider: without this every request would get 401. Local development only.
    SVC_ALLOW_ANONYMOUS: "true",
    ...process.env,
    QUICKSTART_UPSTREAM_URL: upstream.url,
  },
});

const mcpUrl = `${gateway.url}/demo/mcp`;
process.stderr.write(`
  svc-gateway quick start

  MCP server (example, MCP SDK):  ${upstream.url}
  Gateway in front of it:         ${gateway.url}

  Paste this URL into your MCP client (Streamable HTTP transport):

      ${mcpUrl}

  Anonymous access is ON (SVC_ALLOW_ANONYMOUS=true): this demo gateway has no identity provider and
  lets everyone in without a token. Local development only; configure identity_providers for real use.

  Try the tools echo, add and countdown (progress notifications stream through the gateway).
  Health: ${gateway.url}/health   Readiness: ${gateway.url}/readiness   Metrics: ${gateway.url}/metrics
  Ctrl-C to stop.

`);

let stopping = false;
const stop = (): void => {
  if (stopping) process.exit(0);
  stopping = true;
  void gateway.drain().then(() => {
    upstream.server.closeAllConnections();
    upstream.server.close(() => process.exit(0));
  });
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
