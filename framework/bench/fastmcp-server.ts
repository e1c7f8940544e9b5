// A peer for `npm run bench:framework`: the same echo tool served by fastmcp (npm `fastmcp`, a bench-only
// devDependency of this workspace), its HTTP streaming transport with its defaults (stateful sessions, answers on SSE,
// as the plain SDK baseline), on the port given in PORT. Prints {"msg":"listening","url":...} like the other servers.
import { FastMCP } from "fastmcp";
import { z } from "zod";

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0)
  throw new Error(`PORT must be a port number, got ${process.env.PORT}`);

// fastmcp warns on every session whose client declares no capabilities (the bench's sessions declare none, as with
// the other servers): one line per session would bury the bench's output, so only its errors are printed.
const quiet = () => {};
const server = new FastMCP({
  name: "fastmcp-bench",
  version: "1.0.0",
  logger: { debug: quiet, info: quiet, log: quiet, warn: quiet, error: console.error },
});
server.addTool({
  name: "echo",
  description: "Echoes the text",
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});
await server.start({
  transportType: "httpStream",
  httpStream: { port, host: "127.0.0.1", endpoint: "/mcp" },
});
process.stdout.write(`${JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${port}` })}\n`);
process.once("SIGTERM", () => process.exit(0));
