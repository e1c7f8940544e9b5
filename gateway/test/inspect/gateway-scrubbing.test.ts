// PII scrubbing end to end: the MCP SDK client through a real gateway to a real SDK upstream that echoes what it
// receives (support/echo-upstream.ts). Arguments are scrubbed before the upstream sees them, results before the
// client sees them, in JSON and in SSE answers (progress notifications interleaved), per layer (gateway only, server
// only, both merged), for each rule method; whitelisted fields stay; `enabled: false` changes nothing.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { connectClient, startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { type EchoUpstream, LEAKED, startEchoUpstream } from "./support/echo-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
const HASH_KEY = "k".repeat(40);
let json: EchoUpstream;
let sse: EchoUpstream;
let gateway: TestGateway;
let auditFile: string;

/** Every server points at the JSON or the SSE upstream; the name says which layers apply. */
function config(): string {
  const server = (name: string, url: string, security = "") =>
    `  - name: ${name}\n    url: ${url}\n    upstream_auth_type: none\n${security}`;
  const serverPolicy = `    security:
      enabled: true
      whitelist_fields: [note]
      custom_rules:
        - { pattern: "ACCT-[0-9]{6}", method: mask }
        - { pattern: "TICKET-[0-9]+ ?", method: remove }
        - { pattern: "EMP-[0-9]{4}", method: hash }
        - { pattern: "project [a-z]+", method: replace, replacement: "project [REDACTED]" }
      recognizers:
        - { entity_type: EMAIL_ADDRESS, replacement: "[email]" }
`;
  const disabled = `    security:
      enabled: false
      custom_rules:
        - { pattern: "ACCT-[0-9]{6}", method: mask }
`;
  return `version: "1.0"
gateway_policy:
  scrubbing:
    enabled: true
    sensitive_fields: [Password]
    recognizers:
      - { entity_type: EMAIL_ADDRESS, replacement: "<mail>" }
servers:
${server("gw-json", json.url)}${server("gw-sse", sse.url)}${server("both-json", json.url, serverPolicy)}${server("both-sse", sse.url, serverPolicy)}${server("still-on", json.url, disabled)}
`;
}

beforeAll(async () => {
  json = await startEchoUpstream({ json: true });
  cleanup(() => json.close());
  sse = await startEchoUpstream();
  cleanup(() => sse.close());
  const auditDir = await mkdtemp(join(tmpdir(), "svc-scrub-audit-"));
  cleanup(() => rm(auditDir, { recursive: true, force: true }));
  auditFile = join(auditDir, "audit.jsonl");
  gateway = await startGatewayWithConfig(config(), {
    SVC_SCRUB_HASH_KEY: HASH_KEY,
    SVC_AUDIT_FILE: auditFile,
  });
  cleanup(() => gateway.close());
});

const clients = new Map<string, Client>();
afterAll(async () => {
  for (const client of clients.values()) await client.close();
});

async function client(server: string): Promise<Client> {
  let connected = clients.get(server);
  if (connected === undefined) {
    connected = (await connectClient(`${gateway.url}/${server}/mcp`)).client;
    clients.set(server, connected);
  }
  return connected;
}

const lastReceived = (upstream: EchoUpstream) => upstream.received.at(-1) as Record<string, unknown>;
const textOf = (result: unknown) =>
  ((result as { content?: Array<{ text?: string }> }).content ?? [])[0]?.text ?? "";

describe.each([
  ["JSON", "gw-json", () => json],
  ["SSE", "gw-sse", () => sse],
])("gateway layer only, %s answers", (_kind, server, upstream) => {
  test("arguments are scrubbed before the upstream sees them, with the gateway's replacement", async () => {
    const result = await (await client(server)).callTool({
      name: "echo",
      arguments: {
        text: "write to alice@example.com please",
        extra: { password: "hunter2", nested: { pAsSwOrD: 1 } },
      },
    });
    expect(lastReceived(upstream())).toEqual({
      text: "write to <mail> please",
      extra: { password: "[MASKED]", nested: { pAsSwOrD: "[MASKED]" } },
    });
    expect(textOf(result)).toBe("write to <mail> please");
  });

  test("what the upstream itself returns is scrubbed before the client sees it; image bytes and URIs are left alone", async () => {
    const result = await (await client(server)).callTool({ name: "leak", arguments: {} });
    const [text, resource, image] = result.content as Array<Record<string, unknown>>;
    expect(text?.text).not.toContain("carol.smith@example.org");
    expect(text?.text).not.toContain("212-555-0143");
    expect(text?.text).toContain("<mail>");
    expect(text?.text).toContain("<PHONE_NUMBER>");
    expect(resource?.resource).toEqual({
      uri: "file:///customer.txt",
      mimeType: "text/plain",
      text: "SSN on file: <US_SSN>",
    });
    expect(image?.data).toBe(LEAKED.imageData);
    expect(result.structuredContent).toEqual({ customer: { email: "<mail>", card: "<CREDIT_CARD>" } });
  });
});

test("SSE: progress notifications interleaved with the result are scrubbed one event at a time", async () => {
  const messages: string[] = [];
  const result = await (await client("gw-sse")).callTool(
    { name: "echo_progress", arguments: { text: "bob@example.net" } },
    undefined,
    { onprogress: (progress) => messages.push(progress.message ?? "") },
  );
  expect(messages).toEqual(["working on <mail>", "working on <mail>"]);
  expect(textOf(result)).toBe("<mail>");
  expect(lastReceived(sse)).toEqual({ text: "<mail>" });
});

describe.each([
  ["JSON", "both-json", () => json],
  ["SSE", "both-sse", () => sse],
])("gateway and server layers merged, %s answers", (_kind, server, upstream) => {
  test("each rule method; the server's replacement beats the gateway's; the union of fields applies", async () => {
    const result = await (await client(server)).callTool({
      name: "echo",
      arguments: {
        text: "ACCT-123456 TICKET-42 EMP-0042 project apollo mail dave@example.com",
        extra: { note: "dave@example.com stays", password: "x" },
      },
    });
    const received = lastReceived(upstream());
    const text = received.text as string;
    expect(text).toMatch(/^\[MASKED\] <hash:[0-9a-f]{16}> project \[REDACTED\] mail \[email\]$/);
    // Whitelisted at any depth; the gateway's sensitive field still applies on this server (union).
    expect(received.extra).toEqual({ note: "dave@example.com stays", password: "[MASKED]" });
    expect(textOf(result)).toBe(text);

    // A keyed hash is stable, so equal values can still be joined...
    await (await client(server)).callTool({ name: "echo", arguments: { text: "EMP-0042" } });
    expect(lastReceived(upstream()).text).toBe(/<hash:[0-9a-f]{16}>/.exec(text)?.[0]);
  });
});

test("a server whose own policy says enabled: false still gets the gateway's (enabled: true wins across layers)", async () => {
  await (await client("still-on")).callTool({
    name: "echo",
    arguments: { text: "ACCT-123456 eve@example.com" },
  });
  expect(lastReceived(json)).toEqual({ text: "[MASKED] <mail>" });
});

test("each scrubbed message is on the audit trail and in the metrics by entity type and count, never with its values", async () => {
  await (await client("gw-json")).callTool({
    name: "echo",
    arguments: { text: "audit me: grace@example.com and heidi@example.com" },
  });
  const deadline = Date.now() + 10_000;
  let events: Array<{ kind: string; server: string; method: string; reason: string }> = [];
  let text = "";
  while (!events.some((event) => event.reason === "request: EMAIL_ADDRESS=2")) {
    if (Date.now() > deadline)
      throw new Error(`no pii_scrubbed event for the request: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    text = await readFile(auditFile, "utf8").catch(() => "");
    events = text
      .split("\n")
      .filter((line) => line.includes('"pii_scrubbed"'))
      .map((line) => JSON.parse(line));
  }
  expect(events.find((event) => event.reason === "request: EMAIL_ADDRESS=2")).toMatchObject({
    server: "gw-json",
    method: "tools/call",
  });
  // The answer echoed the already scrubbed text: nothing left to replace on the way down for this call, while the
  // `leak` calls above were recorded as responses.
  expect(
    events.some((event) => event.reason.startsWith("response: ") && event.reason.includes("US_SSN=1")),
  ).toBe(true);
  for (const value of ["grace@example.com", "carol.smith@example.org", "536-22-8841", "hunter2"]) {
    expect(text).not.toContain(value);
  }
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  const replaced =
    /svc_gateway_pii_replacements_total\{server="gw-json",direction="request",entity="EMAIL_ADDRESS"\} (\d+)/.exec(
      metrics,
    );
  expect(Number(replaced?.[1])).toBeGreaterThanOrEqual(2);
});

test("a message past what scrubbing inspects is refused, never forwarded with unscanned parts", async () => {
  const before = json.received.length;
  const huge = `${"x".repeat(300_000)} mallory@example.com`;
  await expect(
    (await client("gw-json")).callTool({ name: "echo", arguments: { text: huge } }),
  ).rejects.toThrow(/too large for PII scrubbing to inspect.*maxStringLength/);
  expect(json.received.length).toBe(before);
});

describe("scrubbing off", () => {
  let plain: TestGateway;
  beforeAll(async () => {
    plain = await startGatewayWithConfig(`version: "1.0"
gateway_policy:
  scrubbing:
    enabled: false
    sensitive_fields: [password]
    custom_rules:
      - { pattern: "ACCT-[0-9]{6}", method: mask }
servers:
  - name: off
    url: ${json.url}
    upstream_auth_type: none
  - name: server-only
    url: ${json.url}
    upstream_auth_type: none
    security:
      enabled: true
      custom_rules:
        - { pattern: "TICKET-[0-9]+", method: replace, replacement: "TICKET-?" }
`);
    cleanup(() => plain.close());
  });

  test("enabled: false changes nothing, either way", async () => {
    const { client: offClient } = await connectClient(`${plain.url}/off/mcp`);
    cleanup(() => offClient.close());
    const args = { text: "ACCT-123456 frank@example.com", extra: { password: "hunter2" } };
    const result = await offClient.callTool({ name: "echo", arguments: args });
    expect(lastReceived(json)).toEqual(args);
    expect(textOf(result)).toBe(args.text);
    const leak = await offClient.callTool({ name: "leak", arguments: {} });
    expect(textOf(leak)).toBe(LEAKED.text);
  });

  test("a server's own policy applies on that server alone, with the gateway's turned off", async () => {
    const { client: serverClient } = await connectClient(`${plain.url}/server-only/mcp`);
    cleanup(() => serverClient.close());
    const result = await serverClient.callTool({
      name: "echo",
      arguments: { text: "TICKET-9 ACCT-123456 ivan@example.com", extra: { password: "p" } },
    });
    // Its rule and the default recognizers apply; the gateway's disabled layer still contributes its rules and
    // fields (the layers are a union), so ACCT and password are masked too.
    expect(lastReceived(json)).toEqual({
      text: "TICKET-? [MASKED] <EMAIL_ADDRESS>",
      extra: { password: "[MASKED]" },
    });
    expect(textOf(result)).toBe("TICKET-? [MASKED] <EMAIL_ADDRESS>");
  });
});
