// Spans reach a loopback OTLP/HTTP receiver, named per the OpenTelemetry MCP semantic conventions; inputs and
// outputs only with detailed_tracing, serialized under the size limit.
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build/build-project.ts";
import { DETAIL_LIMIT, serializeForTrace } from "../src/runtime/serialize.ts";
import { startOtlpReceiver } from "./helpers/otlp-receiver.ts";
import type { Spawned } from "./helpers/processes.ts";
import { connectClient, serveBuilt, tempDir, writeProject } from "./helpers/projects.ts";

const COMPONENTS = {
  "tools/echo.ts": `import { defineTool, z } from "@svc-mcp/framework";
export default defineTool({ description: "Echoes", input: { text: z.string(), apiKey: z.string().optional() },
  handler: ({ text }) => "echo:" + text });\n`,
  "tools/soft.ts": `import { defineTool } from "@svc-mcp/framework";
export default defineTool({ description: "Reports an error result", handler: () => ({ isError: true, content: [{ type: "text", text: "no" }] }) });\n`,
  "tools/fail.ts": `import { defineTool } from "@svc-mcp/framework";
export default defineTool({ description: "Fails", handler: () => { throw new Error("boom"); } });\n`,
  "tools/ask.ts": `import { defineTool } from "@svc-mcp/framework";
export default defineTool({ description: "Asks the user and the model", handler: async (_a, ctx) => {
  const answer = await ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
  const sample = await ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 });
  return answer.action + ":" + (sample.content.type === "text" ? sample.content.text : "");
} });\n`,
  "resources/doc.ts": `import { defineResource } from "@svc-mcp/framework";
export default defineResource({ uri: "docs://{id}", description: "Doc", read: (_uri, { id }) => "doc " + id });\n`,
  "prompts/greet.ts": `import { definePrompt, z } from "@svc-mcp/framework";
export default definePrompt({ description: "Greets", arguments: { who: z.string() }, render: ({ who }) => "Hello " + who });\n`,
};

let root: Awaited<ReturnType<typeof tempDir>>;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
const servers: Spawned[] = [];
const clients: Client[] = [];
const elicitationMeta: Record<string, unknown>[] = [];
const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

async function exercise(projectDir: string, env: NodeJS.ProcessEnv = {}) {
  const { server, url } = await serveBuilt(projectDir, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=t0ken",
    OTEL_SERVICE_NAME: "traced-service",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    ...env,
  });
  servers.push(server);
  const client = await connectClient(url, { elicitation: {}, sampling: {} });
  clients.push(client);
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitationMeta.push(request.params._meta ?? {});
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "hello there" },
    model: "test-model",
  }));
  await client.callTool({
    name: "echo",
    arguments: { apiKey: "sk-123", text: "x".repeat(DETAIL_LIMIT * 2) },
    _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
  });
  await client.callTool({ name: "fail", arguments: {} });
  await client.callTool({ name: "soft", arguments: {} });
  expect((await client.callTool({ name: "ask", arguments: {} })).content).toEqual([
    { type: "text", text: "accept:hello there" },
  ]);
  await client.readResource({ uri: "docs://42" });
  await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
  return server;
}

beforeAll(async () => {
  root = await tempDir("otel");
  receiver = await startOtlpReceiver();
  for (const detailed of [false, true]) {
    const dir = join(root.dir, detailed ? "detailed" : "plain");
    await writeProject(dir, {
      "svc.json": { name: "traced", opentelemetry_enabled: true, detailed_tracing: detailed },
      ...COMPONENTS,
    });
    await buildProject(dir, "prod");
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(servers.map((s) => s.stop()));
  await receiver?.close();
  await root?.cleanup();
});

const EXPECTED = [
  "tools/call echo",
  "tools/call fail",
  "tools/call soft",
  "tools/call ask",
  "elicitation/create",
  "sampling/createMessage",
  "resources/read",
  "prompts/get greet",
];

describe("tracing without detailed_tracing", () => {
  it("exports MCP spans over OTLP/HTTP JSON with the OTEL_* settings", async () => {
    await exercise(join(root.dir, "plain"));
    await receiver.waitFor(EXPECTED);
    const byName = (name: string) => receiver.spans.find((s) => s.name === name);
    const echo = byName("tools/call echo");
    expect(echo?.service).toBe("traced-service");
    expect(echo?.kind).toBe(2); // SERVER
    expect(echo?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
    });
    expect(echo?.attributes["mcp.session.id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(echo?.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(echo?.attributes).toMatchObject({
      "network.transport": "tcp",
      "mcp.protocol.version": "2025-11-25",
    });
    // The caller's traceparent in params._meta makes its span the parent.
    expect(echo?.traceId).toBe(CALLER_TRACE);
    expect(echo?.parentSpanId).toBe(CALLER_SPAN);
    // Server-initiated requests carry the tool span's trace context to the client.
    const ask = byName("tools/call ask");
    expect(String(elicitationMeta[0]?.traceparent)).toContain(ask?.traceId);
    expect(byName("elicitation/create")?.traceId).toBe(ask?.traceId);
    expect(byName("tools/call soft")?.attributes["error.type"]).toBe("tool_error");
    expect(byName("tools/call fail")?.status.code).toBe(2); // ERROR
    expect(byName("tools/call fail")?.attributes["error.type"]).toBe("Error");
    expect(byName("elicitation/create")?.kind).toBe(3); // CLIENT
    expect(byName("sampling/createMessage")?.attributes["gen_ai.response.model"]).toBe("test-model");
    expect(byName("resources/read")?.attributes["mcp.resource.uri"]).toBe("docs://42");
    expect(byName("prompts/get greet")?.attributes["gen_ai.prompt.name"]).toBe("greet");
    expect(
      receiver.spans.some((s) =>
        Object.keys(s.attributes).some((k) => k.startsWith("svc.") && k !== "svc.elicitation.action"),
      ),
    ).toBe(false);
    expect(receiver.requests.find((r) => r.path === "/v1/traces")?.headers["x-collector-token"]).toBe(
      "t0ken",
    );
  }, 60_000);
});

describe("tracing with detailed_tracing", () => {
  it("adds inputs and outputs, truncated at the limit, secrets redacted", async () => {
    receiver.spans.length = 0;
    await exercise(join(root.dir, "detailed"));
    await receiver.waitFor(EXPECTED);
    const attribute = (span: string, key: string) =>
      String(receiver.spans.find((s) => s.name === span)?.attributes[key] ?? "");
    const args = attribute("tools/call echo", "gen_ai.tool.call.arguments");
    expect(args).toContain('"apiKey":"[REDACTED]"');
    expect(args).toMatch(/…\[truncated, \d+ chars\]$/);
    expect(args.length).toBeLessThan(DETAIL_LIMIT + 40);
    expect(attribute("tools/call ask", "gen_ai.tool.call.result")).toContain("accept:hello there");
    expect(attribute("elicitation/create", "svc.elicitation.result")).toContain('"name":"Ada"');
    expect(attribute("sampling/createMessage", "svc.sampling.request")).toContain('"maxTokens":5');
    expect(attribute("resources/read", "svc.resource.parameters")).toBe('{"id":"42"}');
    expect(attribute("resources/read", "svc.resource.contents")).toContain("doc 42");
    expect(attribute("prompts/get greet", "svc.prompt.arguments")).toBe('{"who":"Ada"}');
    expect(attribute("tools/call echo", "svc.request.context")).toContain('"name":"svc-test"');
  }, 60_000);

  it("prints spans with OTEL_TRACES_EXPORTER=console", async () => {
    const server = await exercise(join(root.dir, "plain"), { OTEL_TRACES_EXPORTER: "console" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.output()).toContain("name: 'tools/call echo'");
  }, 60_000);
});

describe("serializeForTrace", () => {
  it("never throws on cycles, BigInt, functions or bytes", () => {
    const cyclic: Record<string, unknown> = { n: 1n, f: () => 1, bytes: new Uint8Array(3) };
    cyclic.self = cyclic;
    expect(serializeForTrace(cyclic)).toBe(
      '{"n":"1","f":"[Function]","bytes":"[3 bytes]","self":"[Circular]"}',
    );
    expect(serializeForTrace(undefined)).toBe("undefined");
  });
});
