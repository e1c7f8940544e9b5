// The pipeline's own steps, one by one (the end-to-end behaviour is in test/proxy).

import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import type { LoadedConfig } from "../../src/config/index.ts";
import { validateConfigText } from "../../src/config/index.ts";
import { parseRequest } from "../../src/pipeline/parse-request.ts";
import { readBody } from "../../src/pipeline/read-body.ts";
import { requestIdFrom } from "../../src/pipeline/request-id.ts";
import { resolveRoute } from "../../src/pipeline/route.ts";
import { buildSnapshot } from "../../src/runtime/config-snapshot.ts";
import { readSettings } from "../../src/server/settings.ts";

function snapshot(yaml: string, env: Record<string, string> = {}) {
  const result = validateConfigText(yaml);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const loaded: LoadedConfig = {
    config: result.config,
    mode: result.mode,
    source: "test.yaml",
    warnings: [],
  };
  return buildSnapshot(loaded, env, 1, false);
}

const YAML = `version: "1.0"
servers:
  - name: tools
    url: http://10.0.0.5:3000/mcp?tenant=a
    upstream_auth_type: none
  - name: off
    url: http://10.0.0.6/mcp
    enabled: false
    upstream_auth_type: none
  - name: keyed.v2
    url: https://keyed.example/mcp
    upstream_auth_type: api_key
`;

describe("config snapshot and route", () => {
  test("each server is resolved once into pool origin, path and upstream auth", () => {
    const routes = snapshot(YAML, {
      SVC_UPSTREAM_API_KEY_KEYED_V2: "k1",
      SVC_UPSTREAM_KEY_HEADER_KEYED_V2: "X-Api-Key",
    });
    expect(resolveRoute(routes, "tools")).toMatchObject({
      origin: "http://10.0.0.5:3000",
      path: "/mcp?tenant=a",
      authType: "none",
    });
    expect(resolveRoute(routes, "keyed.v2")).toMatchObject({
      origin: "https://keyed.example",
      authHeaders: { "x-api-key": "k1" },
    });
  });

  test("api_key defaults to a bearer Authorization header, and a missing key is recorded, naming the variable", () => {
    expect(
      resolveRoute(snapshot(YAML, { SVC_UPSTREAM_API_KEY_KEYED_V2: "k1" }), "keyed.v2").authHeaders,
    ).toEqual({
      authorization: "Bearer k1",
    });
    expect(resolveRoute(snapshot(YAML), "keyed.v2").apiKeyProblem).toContain("SVC_UPSTREAM_API_KEY_KEYED_V2");
  });

  test("unknown and disabled servers are 404s with different reasons", () => {
    const routes = snapshot(YAML);
    expect(() => resolveRoute(routes, "nope")).toThrow(
      expect.objectContaining({ code: "server_not_found", status: 404 }),
    );
    expect(() => resolveRoute(routes, "off")).toThrow(
      expect.objectContaining({ code: "server_disabled", status: 404 }),
    );
  });
});

describe("parseRequest", () => {
  test("collects the ids that expect answers and a label", () => {
    const single = parseRequest(Buffer.from('{"jsonrpc":"2.0","id":"a","method":"tools/call"}'), 100);
    expect(single).toMatchObject({ batch: false, requestIds: ["a"], method: "tools/call" });
    const batch = parseRequest(
      Buffer.from(
        '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
      ),
      100,
    );
    expect(batch).toMatchObject({ batch: true, requestIds: [1], method: "batch" });
    expect(parseRequest(Buffer.from('{"jsonrpc":"2.0","id":2,"result":{}}'), 100).requestIds).toEqual([]);
  });

  test("refuses a batch over the limit before looking at its messages", () => {
    const batch = (n: number) =>
      Buffer.from(
        JSON.stringify(Array.from({ length: n }, (_, id) => ({ jsonrpc: "2.0", id, method: "ping" }))),
      );
    expect(parseRequest(batch(3), 3).requestIds).toEqual([0, 1, 2]);
    expect(() => parseRequest(batch(4), 3)).toThrow(
      expect.objectContaining({ code: "batch_too_large", status: 400 }),
    );
  });

  test("refuses what is not JSON-RPC with the right code", () => {
    expect(() => parseRequest(Buffer.from("nope"), 100)).toThrow(
      expect.objectContaining({ code: "invalid_json" }),
    );
    expect(() => parseRequest(Buffer.from("[]"), 100)).toThrow(
      expect.objectContaining({ code: "invalid_request" }),
    );
  });
});

describe("readBody", () => {
  function incoming(headers: Record<string, string>, chunks: string[]): IncomingMessage {
    const stream = new PassThrough();
    Object.assign(stream, { headers });
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    return stream as unknown as IncomingMessage;
  }

  test("reads the whole body under the limit", async () => {
    expect((await readBody(incoming({}, ["ab", "cd"]), 10)).toString()).toBe("abcd");
  });

  test("refuses a declared length over the limit before reading, and a streamed one once it passes", async () => {
    await expect(readBody(incoming({ "content-length": "11" }, []), 10)).rejects.toMatchObject({
      code: "body_too_large",
      headers: { connection: "close" },
    });
    await expect(readBody(incoming({}, ["123456", "789012"]), 10)).rejects.toMatchObject({
      code: "body_too_large",
    });
  });
});

describe("requestIdFrom and settings", () => {
  test("keeps a plausible client id, replaces anything else", () => {
    expect(requestIdFrom("abc-123_x.y:z")).toBe("abc-123_x.y:z");
    expect(requestIdFrom("has space")).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom(`${"a".repeat(129)}`)).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom(undefined)).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("settings have documented defaults and name the variable of a bad value", () => {
    expect(readSettings({})).toMatchObject({
      drainDelayMs: 5000,
      drainTimeoutMs: 25000,
      upstreamTimeoutMs: 60000,
      maxBodyBytes: 4 * 1024 * 1024,
      configPollMs: 5000,
    });
    expect(() => readSettings({ SVC_DRAIN_TIMEOUT_SECONDS: "soon" })).toThrow(/SVC_DRAIN_TIMEOUT_SECONDS/);
    expect(() => readSettings({ SVC_MAX_BODY_BYTES: "0" })).toThrow(
      /SVC_MAX_BODY_BYTES must be a number from 1/,
    );
  });
});
