// What the MCP route answers, as plain parts. The node:http fast path (server/mcp-route.ts) writes them straight
// to the client's response, and Hono's route turns them into a Response (server/app.ts): the proxied JSON answer
// never becomes a Response object that is built only to be taken apart again.
export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as it goes to the client; null = none. */
  body: string | Buffer | null;
  /** True when the answer is already being written to the client's response (the SSE relay): nothing to send. */
  sent?: boolean;
}
