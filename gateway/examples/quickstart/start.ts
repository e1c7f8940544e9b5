// `npm start`: the example MCP server and the gateway in front of it, on embedded defaults (in-memory KV
// store, no Redis). Prints the URL to paste into an MCP client. Ctrl-C stops both.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startGateway } from "../../src/server/start-gateway.ts";
import { startExampleUpstream } from "./upstream-server.ts";

// The audit trail goes to its own file, not interleaved with the request log on stdout, so that
// `svc-gateway audit verify FILE` can check it. A fresh file each run (a demo's trail, bounded by the run),
// unless SVC_AUDIT_FILE names the user's own, which is appended to as the gateway always does.
const auditFile = process.env.SVC_AUDIT_FILE?.trim() || join(tmpdir(), "svc-quickstart-audit.jsonl");
if (!process.env.SVC_AUDIT_FILE?.trim()) writeFileSync(auditFile, "", { mode: 0o600 });

const upstream = await startExampleUpstream();
const gateway = await startGateway({
  configPath: fileURLToPath(new URL("./config.yaml", import.meta.url)),
  host: "127.0.0.1",
  env: {
    SVC_DRAIN_DELAY_SECONDS: "0", // nothing routes to a laptop: stop at once on Ctrl-C
    // The demo has no identity provider: without this every request would get 401. Local development only.
    SVC_ALLOW_ANONYMOUS: "true",
    ...process.env,
    SVC_AUDIT_FILE: auditFile,
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
  Audit trail: ${auditFile}
      check it with: npx svc-gateway audit verify ${auditFile}
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
