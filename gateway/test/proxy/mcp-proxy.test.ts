// The transparent proxy, end to end: a real MCP SDK Client → the gateway → real SDK McpServer upstreams.
import {
  CallToolResultSchema,
  type JSONRPCMessage,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { connectClient, startTestGateway, type TestGateway } from "./support/gateway.ts";
import { startUpstream, type Upstream } from "./support/upstream.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function metricsText(gateway: TestGateway): Promise<string> {
  const response = await request(`${gateway.url}/metrics`);
  return response.body.text();
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function setup(
  options: Parameters<typeof startUpstream>[0],
): Promise<{ upstream: Upstream; gateway: TestGateway; endpoint: string }> {
  const upstream = await startUpstream(options);
  cleanups.push(() => upstream.close());
  const gateway = await startTestGateway([{ name: "up", url: upstream.url }]);
  cleanups.push(() => gateway.close());
  return { upstream, gateway, endpoint: `${gateway.url}/up/mcp` };
}

describe.each([
  { mode: "SSE responses", jsonResponse: false },
  { mode: "JSON responses", jsonResponse: true },
])("SDK client through the gateway, $mode", ({ jsonResponse }) => {
  let upstream: Upstream;
  let endpoint: string;
  beforeAll(async () => {
    ({ upstream, endpoint } = await setup({ stateful: true, jsonResponse }));
  });

  test("initialize, list and call", async () => {
    const { client } = await connectClient(endpoint);
    expect(client.getServerVersion()?.name).toBe("test-upstream");
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["echo", "headers", "gated"]),
    );
    const resources = await client.listResources();
    expect(resources.resources[0]?.uri).toBe("test://greeting");
    const result = await client.callTool({ name: "echo", arguments: { text: "héllo ✓" } });
    expect(result.content).toEqual([{ type: "text", text: "héllo ✓" }]);
    await client.close();
  });

  test("carries MCP headers both ways, never the client's credentials", async () => {
    const { client, transport } = await connectClient(endpoint, {
      headers: { authorization: "Bearer client-token-123", cookie: "gw=1", "x-custom": "dropped" },
    });
    const result = await client.callTool({ name: "headers", arguments: {} });
    const seen = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}") as Record<
      string,
      string
    >;
    expect(seen["mcp-session-id"]).toBe(transport.sessionId);
    expect(seen["mcp-protocol-version"]).toBe(transport.protocolVersion);
    expect(seen.accept).toContain("text/event-stream");
    expect(seen["content-type"]).toBe("application/json");
    expect(seen["x-custom"]).toBeUndefined(); // not on the request allow-list (SVC_FORWARD_REQUEST_HEADERS)
    expect(seen["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(JSON.stringify(upstream.requests)).not.toContain("client-token-123");
    await client.close();
  });

  test("DELETE ends the session upstream; the session id then gets the upstream's 404", async () => {
    const { client, transport } = await connectClient(endpoint);
    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    expect(upstream.requests.at(-1)?.method).toBe("DELETE");
    const response = await request(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.statusCode).toBe(404);
    expect(response.headers["x-request-id"]).toBeTypeOf("string");
    await response.body.text();
    await client.close();
  });
});

describe("streams", () => {
  test("progress reaches the client while the upstream still holds the stream open", async () => {
    const { upstream, endpoint } = await setup({ stateful: true });
    const { client } = await connectClient(endpoint);
    const events: string[] = [];
    let allProgress: () => void = () => {};
    const progressDone = new Promise<void>((resolve) => {
      allProgress = resolve;
    });
    const call = client
      .callTool({ name: "gated", arguments: { steps: 3 } }, CallToolResultSchema, {
        onprogress: (progress) => {
          events.push(`progress ${progress.progress}`);
          if (progress.progress === 3) allProgress();
        },
      })
      .then((result) => {
        events.push("result");
        return result;
      });
    await progressDone;
    // All three arrived through the gateway while the tool is still blocked upstream: nothing was buffered.
    expect(upstream.gate.entered).toBe(1);
    expect(events).toEqual(["progress 1", "progress 2", "progress 3"]);
    upstream.gate.release();
    const result = await call;
    expect(result.content).toEqual([{ type: "text", text: "released" }]);
    expect(events).toEqual(["progress 1", "progress 2", "progress 3", "result"]);
    await client.close();
  });

  test("the GET stream delivers server notifications and shows in the open-streams gauge", async () => {
    const { upstream, gateway, endpoint } = await setup({ stateful: true });
    const { client } = await connectClient(endpoint);
    const received: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      received.push(notification.params.data);
    });
    await waitFor(
      async () => (await metricsText(gateway)).includes('svc_gateway_open_streams{server="up"} 1'),
      "the GET stream to open",
    );
    await upstream.broadcast("hello over GET");
    await waitFor(() => received.length > 0, "the notification");
    expect(received).toEqual(["hello over GET"]);
    await client.close();
    await waitFor(
      async () => (await metricsText(gateway)).includes('svc_gateway_open_streams{server="up"} 0'),
      "the GET stream to close",
    );
  });

  test("a client that drops an SSE stream: the gateway lets go of the upstream stream too", async () => {
    const { upstream, gateway, endpoint } = await setup({ stateful: true });
    const { transport, client } = await connectClient(endpoint);
    const response = await request(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId as string,
        "mcp-protocol-version": transport.protocolVersion as string,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "gated", arguments: { steps: 1 }, _meta: { progressToken: "t" } },
      }),
    });
    const reader = response.body[Symbol.asyncIterator]();
    expect(String((await reader.next()).value)).toContain("notifications/progress");
    const before = upstream.disconnects();
    response.body.destroy();
    await waitFor(() => upstream.disconnects() > before, "the upstream to see the disconnect");
    await client.close();
    await waitFor(
      async () => /svc_gateway_open_streams\{server="up"\} 0\n/.test(await metricsText(gateway)),
      "no open streams",
    );
  });

  test("resumption: the upstream closes the stream, the client resumes with Last-Event-ID", async () => {
    const { upstream, endpoint } = await setup({ stateful: true, resumable: true });
    const { client } = await connectClient(endpoint);
    let progressed: () => void = () => {};
    const firstProgress = new Promise<void>((resolve) => {
      progressed = resolve;
    });
    const call = client.callTool({ name: "polled", arguments: {} }, CallToolResultSchema, {
      onprogress: () => progressed(),
    });
    await firstProgress;
    upstream.gate.release();
    const result = await call;
    expect(result.content).toEqual([{ type: "text", text: "resumed" }]);
    const resumed = upstream.requests.find(
      (r) => r.method === "GET" && r.headers["last-event-id"] !== undefined,
    );
    expect(resumed).toBeDefined();
    await client.close();
  });

  test("SSE events keep their id: and retry: fields on the wire", async () => {
    const { upstream, endpoint } = await setup({ stateful: true, resumable: true });
    const { transport } = await connectClient(endpoint);
    const response = await request(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId as string,
        "mcp-protocol-version": transport.protocolVersion as string,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "polled", arguments: {}, _meta: { progressToken: "p" } },
      }),
    });
    expect(response.headers["content-type"]).toContain("text/event-stream");
    const text = await response.body.text(); // the upstream closes this stream itself (polling)
    expect(text).toMatch(/^id: \S+\nretry: 10\ndata: \n\n/);
    expect(text).toMatch(/id: \S+\nevent: message|event: message\nid: \S+/);
    expect(text).toContain('"notifications/progress"');
    upstream.gate.release();
    await transport.close();
  });
});

test("an unknown (newer) MCP-Protocol-Version passes through untouched, and so does the upstream's answer", async () => {
  const { upstream, endpoint } = await setup({ stateful: true });
  const response = await request(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2099-01-01",
      "mcp-session-id": "not-a-session",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body.text();
  expect(upstream.lastHeaders()["mcp-protocol-version"]).toBe("2099-01-01");
  // The upstream decides (here: unknown session → 404), the gateway relays its status.
  expect(response.statusCode).toBe(404);
});

describe("JSON-RPC batches (forwarded whole)", () => {
  let endpoint: string;
  beforeAll(async () => {
    ({ endpoint } = await setup({ jsonResponse: true }));
  });

  const post = (body: string) =>
    request(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-03-26",
      },
      body,
    });

  test("a batch reaches the upstream as one request and its answer comes back whole", async () => {
    const batch: JSONRPCMessage[] = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    const response = await post(JSON.stringify(batch));
    const text = await response.body.text();
    expect({ status: response.statusCode, body: text }).toMatchObject({ status: 200 });
    const answers = JSON.parse(text) as Array<{ id: number }>;
    expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
  });

  test("an empty batch is refused by the gateway as an invalid JSON-RPC request", async () => {
    const response = await post("[]");
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
  });

  test("a body that is not JSON gets a JSON-RPC parse error", async () => {
    const response = await post("{nope");
    expect(response.statusCode).toBe(400);
    expect(await response.body.json()).toMatchObject({ id: null, error: { code: -32700 } });
  });
});
