// Resumed streams are inspected like any other: an MCP SDK 1.x server with resumability that polls (it closes its SSE
// stream and the SDK client fetches the result with a GET carrying Last-Event-ID) through a spawned gateway (`svc-gateway start`) with PII
// scrubbing and the firewall on. The result that arrives by resumption is scrubbed, or withheld when it carries an
// injection; and a result the firewall withheld on the POST cannot be had raw by resuming the stream by hand.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { connectClient } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { type PollingUpstream, startPollingUpstream } from "./support/polling-upstream.ts";
import { type SpawnedTestGateway, spawnGatewayWithConfig } from "./support/spawned-gateway.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 90_000 });

const cleanup = cleanupsAfterAll();
let upstream: PollingUpstream;
let gateway: SpawnedTestGateway;
let client: Client;
let sessionId: string;

beforeAll(async () => {
  upstream = await startPollingUpstream();
  cleanup(() => upstream.close());
  gateway = await spawnGatewayWithConfig(`version: "1.0"
gateway_policy:
  scrubbing: { enabled: true }
  firewall: { enabled: true, mode: block }
servers:
  - name: polling
    url: ${upstream.url}
    upstream_auth_type: none
`);
  cleanup(() => gateway.close());
  const connected = await connectClient(`${gateway.url}/polling/mcp`);
  client = connected.client;
  sessionId = connected.transport.sessionId as string;
});

afterAll(async () => {
  await client?.close();
});

const resumptions = () =>
  upstream.requests.filter((r) => r.method === "GET" && r.lastEventId !== undefined).length;

test("a result delivered by resumption (GET with Last-Event-ID) is scrubbed", async () => {
  const before = resumptions();
  const result = await client.callTool({ name: "polled_leak", arguments: {} });
  expect(resumptions()).toBeGreaterThan(before);
  expect(result.content).toEqual([
    { type: "text", text: "Reach the customer at <EMAIL_ADDRESS> or <PHONE_NUMBER>." },
  ]);
});

test("a result with an injection delivered by resumption is withheld (-32014)", async () => {
  const before = resumptions();
  const call = client.callTool({ name: "polled_injection", arguments: {} });
  await expect(call).rejects.toMatchObject({ code: -32014 });
  await expect(call).rejects.not.toThrow(/ignore all previous/i);
  expect(resumptions()).toBeGreaterThan(before);
});

test("a result the firewall withheld on the POST is withheld again when the stream is resumed by hand", async () => {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-session-id": sessionId,
    "mcp-protocol-version": "2025-11-25",
  };
  const posted = await fetch(`${gateway.url}/polling/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 900,
      method: "tools/call",
      params: { name: "injection", arguments: {} },
    }),
  });
  const stream = await posted.text();
  expect(stream).toContain("-32014");
  expect(stream).not.toMatch(/ignore all previous/i);
  // Resume from the first event id of that stream: the upstream replays what followed it, the result included.
  const firstId = /^id: (.+)$/m.exec(stream)?.[1];
  expect(firstId).toBeDefined();
  const resumed = await fetch(`${gateway.url}/polling/mcp`, {
    headers: { ...headers, "last-event-id": firstId as string },
    signal: AbortSignal.timeout(5_000),
  });
  const replayed = await readUntil(resumed, (text) => text.includes('"id":900'));
  expect(replayed).not.toMatch(/ignore all previous/i);
  expect(replayed).toContain("-32014");
});

/** Reads an SSE body until `done` holds for what arrived (a resumed GET stream stays open), then cancels it. */
async function readUntil(response: Response, done: (text: string) => boolean): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text;
}
