import { z } from "zod";
import { flag, httpUrl, intInRange, nameField, oneOf, stringList } from "./fields.ts";

// The prompt-injection firewall's settings, at two layers: `gateway_policy.firewall` (every server) and
// `servers[].firewall` (one server). The server layer only tightens the gateway's (firewall/policy.ts merges them and
// refuses a server setting that would loosen one): so its fields have no defaults of their own, an absent field
// inherits the gateway's value.

/** Client messages whose arguments the firewall can inspect. */
export const FIREWALL_REQUEST_METHODS = ["tools/call", "prompts/get", "completion/complete"] as const;
/**
 * Upstream messages whose content it can inspect: the results of tools/call, resources/read and prompts/get, and
 * the sampling requests a server sends to the client.
 */
export const FIREWALL_RESPONSE_METHODS = [
  "tools/call",
  "resources/read",
  "prompts/get",
  "sampling/createMessage",
] as const;

export const FIREWALL_MODES = ["block", "monitor"] as const;
export const DETECTOR_ERROR_ACTIONS = ["block", "allow"] as const;

/** The most text of one message the firewall reads; past it, block mode refuses the message as uninspectable. */
export const MAX_TEXT_CHARS = { min: 1024, max: 16_777_216, fallback: 1_048_576 } as const;

const threshold = (direction: string) =>
  z
    .number({ error: "must be a number from 0 to 1" })
    .min(0, { error: "must be a number from 0 to 1" })
    .max(1, { error: "must be a number from 0 to 1" })
    .describe(`Score (0-1) at or above which ${direction} is an injection; 0.5 is each detector's own cut`);

export const builtinDetectorSchema = z
  .strictObject({ type: z.literal("builtin", { error: "must be builtin, webhook or onnx" }) })
  .describe("The built-in classifier (in process)");

export const webhookDetectorSchema = z
  .strictObject({
    type: z.literal("webhook"),
    name: nameField("Detector name, for audit and metrics (webhook:<name>)"),
    url: httpUrl("Where the text is POSTed for scoring (docs/firewall-detectors.md gives the JSON)"),
    timeout_ms: intInRange(10, 30_000)
      .default(1000)
      .describe("Per-call timeout in milliseconds (10-30000); a call past it counts as no answer"),
    headers: z
      .record(z.string(), z.string({ error: "must be a string" }), {
        error: "must be a map of header values",
      })
      .default({})
      .describe("Headers sent with each call (e.g. authorization: Bearer ${DETECTOR_KEY}); never logged"),
    on_error: oneOf(
      DETECTOR_ERROR_ACTIONS,
      "When the detector gives no answer: block the message or let it through (default block)",
    ).default("block"),
  })
  .describe("A remote detector called over HTTP");

export const onnxDetectorSchema = z
  .strictObject({
    type: z.literal("onnx"),
    name: nameField("Detector name, for audit and metrics (onnx:<name>)"),
    path: nameField("Directory with model.onnx, tokenizer.json and config.json"),
    on_error: oneOf(DETECTOR_ERROR_ACTIONS, "When the model cannot score a text (default block)").default(
      "block",
    ),
  })
  .describe("A text-classification model file run in process (optional dependency onnxruntime-node)");

export const detectorSchema = z.discriminatedUnion(
  "type",
  [builtinDetectorSchema, webhookDetectorSchema, onnxDetectorSchema],
  { error: "must be a detector with type builtin, webhook or onnx" },
);

// Each setting once, without a default; the gateway layer adds the defaults, the server layer makes them optional.
const settings = {
  mode: oneOf(FIREWALL_MODES, "block refuses what is detected; monitor only records it"),
  requests: z
    .array(oneOf(FIREWALL_REQUEST_METHODS, "A client method"))
    .describe("Client messages whose arguments are inspected"),
  responses: z
    .array(oneOf(FIREWALL_RESPONSE_METHODS, "An upstream answer or request"))
    .describe(
      "Upstream results (by the method they answer) and sampling requests whose content is inspected",
    ),
  request_threshold: threshold("a client's text"),
  response_threshold: threshold("an upstream's text"),
  allow_tools: stringList("Tool names whose arguments and results are not inspected"),
  allow_fields: stringList(
    "Field names (in arguments and structured results) whose values are not inspected",
  ),
  detectors: z
    .array(detectorSchema)
    .max(8, { error: "must list at most 8 detectors" })
    .describe(
      "The detectors to run; a message is an injection when any of them scores it at or above the threshold",
    ),
  max_text_chars: intInRange(MAX_TEXT_CHARS.min, MAX_TEXT_CHARS.max).describe(
    `The most text of one message inspected (${MAX_TEXT_CHARS.min}-${MAX_TEXT_CHARS.max}); past it block mode refuses the message`,
  ),
};

export const firewallPolicySchema = z.strictObject({
  enabled: flag(false, "Turns the prompt-injection firewall on (any layer that enables it turns it on)"),
  mode: settings.mode.default("block"),
  requests: settings.requests.default([...FIREWALL_REQUEST_METHODS]),
  responses: settings.responses.default([...FIREWALL_RESPONSE_METHODS]),
  request_threshold: settings.request_threshold.default(0.5),
  response_threshold: settings.response_threshold.default(0.5),
  allow_tools: settings.allow_tools.default([]),
  allow_fields: settings.allow_fields.default([]),
  detectors: settings.detectors.default([{ type: "builtin" }]),
  max_text_chars: settings.max_text_chars.default(MAX_TEXT_CHARS.fallback),
  spotlighting: flag(
    false,
    "Wraps text tool results in delimited, origin-tagged blocks so the model can tell data from instructions",
  ),
});

export const serverFirewallSchema = z.strictObject({
  enabled: z
    .boolean({ error: "must be true or false" })
    .optional()
    .describe("true turns the firewall on here"),
  mode: settings.mode.optional(),
  requests: settings.requests.optional(),
  responses: settings.responses.optional(),
  request_threshold: settings.request_threshold.optional(),
  response_threshold: settings.response_threshold.optional(),
  allow_tools: settings.allow_tools.optional(),
  allow_fields: settings.allow_fields.optional(),
  detectors: settings.detectors.optional(),
  max_text_chars: settings.max_text_chars.optional(),
  spotlighting: z
    .boolean({ error: "must be true or false" })
    .optional()
    .describe("true turns spotlighting on here"),
});

export type FirewallPolicy = z.output<typeof firewallPolicySchema>;
export type ServerFirewallPolicy = z.output<typeof serverFirewallSchema>;
export type DetectorConfig = z.output<typeof detectorSchema>;
