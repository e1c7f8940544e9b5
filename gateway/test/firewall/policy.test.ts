// The firewall's two layers: the gateway's defaults, a server layer that may only tighten an enabled gateway
// firewall (a loosening setting is refused by validate, naming the field), lists that add up, and detectors the
// configuration cannot build yet refused.
import { describe, expect, test } from "vitest";
import { mergeFirewallLayers } from "../../src/firewall/policy.ts";
import { expectValid, problemLines } from "../config/helpers.ts";

const SERVER = { name: "docs", url: "http://docs.internal/mcp", upstream_auth_type: "none" };

function config(gateway: Record<string, unknown> | undefined, server: Record<string, unknown> | undefined) {
  return {
    version: "1.0",
    ...(gateway === undefined ? {} : { gateway_policy: { firewall: gateway } }),
    servers: [{ ...SERVER, ...(server === undefined ? {} : { firewall: server }) }],
  };
}

function settingsOf(
  gateway: Record<string, unknown> | undefined,
  server: Record<string, unknown> | undefined,
) {
  const parsed = expectValid(config(gateway, server));
  const merged = mergeFirewallLayers(parsed.gateway_policy.firewall, parsed.servers[0]?.firewall, [
    "servers",
    0,
    "firewall",
  ]);
  if ("problems" in merged) throw new Error(JSON.stringify(merged.problems));
  return merged.settings;
}

describe("defaults", () => {
  test("off unless a layer turns it on; on, it blocks at 0.5 both ways with the built-in detector, everywhere", () => {
    expect(settingsOf(undefined, undefined)).toBeUndefined();
    const on = settingsOf({ enabled: true }, undefined);
    expect(on).toMatchObject({
      mode: "block",
      thresholds: { request: 0.5, response: 0.5 },
      detectors: [{ type: "builtin" }],
      maxTextChars: 1_048_576,
      spotlighting: false,
    });
    expect([...(on?.requests ?? [])]).toEqual(["tools/call", "prompts/get", "completion/complete"]);
    expect([...(on?.responses ?? [])]).toEqual([
      "tools/call",
      "resources/read",
      "prompts/get",
      "sampling/createMessage",
    ]);
  });

  test("a server alone may turn it on, with its own mode and thresholds, when the gateway's is off", () => {
    expect(settingsOf(undefined, { enabled: true, mode: "monitor", request_threshold: 0.8 })).toMatchObject({
      mode: "monitor",
      thresholds: { request: 0.8, response: 0.5 },
    });
  });
});

describe("a server only tightens an enabled gateway firewall", () => {
  test("tighter values win: block over monitor, the lower threshold, spotlighting on", () => {
    expect(
      settingsOf(
        { enabled: true, mode: "monitor", request_threshold: 0.7 },
        { mode: "block", request_threshold: 0.4, spotlighting: true },
      ),
    ).toMatchObject({ mode: "block", thresholds: { request: 0.4, response: 0.5 }, spotlighting: true });
    // An absent field inherits; a looser-looking default does not count as the server's choice.
    expect(settingsOf({ enabled: true, mode: "monitor" }, { request_threshold: 0.3 })?.mode).toBe("monitor");
  });

  test("each loosening setting is refused, all at once, naming the field", () => {
    const lines = problemLines(
      config(
        { enabled: true, request_threshold: 0.6, spotlighting: true, max_text_chars: 4096 },
        {
          enabled: false,
          mode: "monitor",
          request_threshold: 0.9,
          response_threshold: 0.51,
          spotlighting: false,
          max_text_chars: 8192,
        },
      ),
    );
    const tail = "a server's firewall settings may only tighten gateway_policy.firewall, which is enabled";
    expect(lines).toEqual([
      `servers[0].firewall.enabled: cannot turn the firewall off: ${tail}`,
      `servers[0].firewall.mode: cannot turn block into monitor: ${tail}`,
      `servers[0].firewall.request_threshold: cannot raise the threshold above 0.6: ${tail}`,
      `servers[0].firewall.response_threshold: cannot raise the threshold above 0.5: ${tail}`,
      `servers[0].firewall.spotlighting: cannot turn spotlighting off: ${tail}`,
      `servers[0].firewall.max_text_chars: cannot raise it above 4096: ${tail}`,
    ]);
  });

  test("lists add up: methods, allow-lists and detectors; a detector name defined twice is refused", () => {
    const webhook = { type: "webhook", name: "vendor", url: "https://detector.example.com/score" };
    const merged = settingsOf(
      {
        enabled: true,
        responses: ["tools/call"],
        allow_tools: ["render_markdown"],
        detectors: [{ type: "builtin" }],
      },
      {
        responses: ["resources/read"],
        allow_fields: ["source_code"],
        detectors: [{ type: "builtin" }, webhook],
      },
    );
    expect([...(merged?.responses ?? [])]).toEqual(["tools/call", "resources/read"]);
    expect([...(merged?.allowTools ?? [])]).toEqual(["render_markdown"]);
    expect([...(merged?.allowFields ?? [])]).toEqual(["source_code"]);
    expect(merged?.detectors).toEqual([{ type: "builtin" }, webhook]);
    expect(problemLines(config({ enabled: true, detectors: [webhook] }, { detectors: [webhook] }))).toEqual([
      "servers[0].firewall.detectors[0].name: a detector named webhook:vendor is already defined in gateway_policy.firewall.detectors",
    ]);
  });
});

describe("what the schema refuses", () => {
  test("thresholds outside 0-1, unknown methods, a detector without a known type or with fields of another type", () => {
    const lines = problemLines(
      config(
        {
          enabled: true,
          request_threshold: 1.5,
          requests: ["tools/list"],
          detectors: [
            { type: "regex" },
            { type: "webhook", name: "w", url: "ftp://x" },
            { type: "webhook", path: "/m" },
          ],
        },
        { detectors: [{ type: "onnx", name: "guard", path: "/models/guard" }] },
      ),
    );
    expect(lines.join("\n")).toMatch(
      /gateway_policy\.firewall\.request_threshold: must be a number from 0 to 1/,
    );
    expect(lines.join("\n")).toMatch(
      /gateway_policy\.firewall\.requests\[0\]: must be one of: tools\/call, prompts\/get, completion\/complete/,
    );
    expect(lines.join("\n")).toMatch(/gateway_policy\.firewall\.detectors\[0\]/);
    expect(lines.join("\n")).toMatch(
      /gateway_policy\.firewall\.detectors\[1\]\.url: must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(lines.join("\n")).toMatch(
      /gateway_policy\.firewall\.detectors\[2\]\.name: is required for a detector of type webhook/,
    );
    expect(lines.join("\n")).toMatch(
      /gateway_policy\.firewall\.detectors\[2\]\.path: means nothing for a detector of type webhook/,
    );
    expect(lines.join("\n")).not.toMatch(/servers\[0\]\.firewall\.detectors\[0\]/);
  });
});
