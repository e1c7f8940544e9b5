// A peer in the bench: the `mcp-proxy` library (npm) wired HTTP→HTTP as its own CLI wires a proxy — one upstream
// Client over streamable HTTP, and a streamable HTTP server (stateless, JSON responses, no event store) whose
// per-request Server forwards to it through the library's proxyServer. Run as its own process:
//   node mcp-proxy-peer.ts <upstream MCP URL> <port>
// prints {"msg":"listening","url":"http://127.0.0.1:<port>/mcp"}.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/server";
import { proxyServer, startHTTPServer } from "mcp-proxy";

const [upstreamUrl, portArgument] = process.argv.slice(2);
if (!upstreamUrl || !portArgument) throw new Error("usage: mcp-proxy-peer.ts <upstream MCP URL> <port>");
const port = Number(portArgument);

const client = new Client({ name: "mcp-proxy", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));

const server = await startHTTPServer({
  createServer: async () => {
    const serverCapabilities = client.getServerCapabilities() ?? {};
    const version = client.getServerVersion() ?? { name: "upstream", version: "0" };
    const downstream = new Server(version, { capabilities: serverCapabilities });
    await proxyServer({ client, server: downstream, serverCapabilities });
    return downstream;
  },
  enableJsonResponse: true,
  eventStore: false,
  host: "127.0.0.1",
  port,
  sseEndpoint: null,
  stateless: true,
  streamEndpoint: "/mcp",
});
console.log(JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${port}/mcp` }));
process.once("SIGTERM", () => {
  server.close().finally(() => process.exit(0));
});
