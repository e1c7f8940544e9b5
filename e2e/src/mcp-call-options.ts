import type { ParseArgsOptionsConfig } from "node:util";

// The options the kind e2e's MCP scripts share (kind-mcp-check.ts, kind-traffic.ts): where the gateway and the
// server are, how to get a user's token (client_credentials at the identity provider), and which tool to call with
// what and what its answer must contain.
export const MCP_CALL_OPTIONS = {
  url: { type: "string" },
  server: { type: "string" },
  "token-url": { type: "string" },
  client: { type: "string" },
  resource: { type: "string" },
  tool: { type: "string" },
  args: { type: "string", default: "{}" },
  expect: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;
