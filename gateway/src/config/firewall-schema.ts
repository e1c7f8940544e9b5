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

export const DETECTOR_TYPES = ["builtin", "webhook", "onnx"] as const;
export const WEBHOOK_TIMEOUT_MS = { min: 10, max: 30_000, fallback: 1000 } as const;

/** The fields each detector type needs, and those that mean nothing for it. */
const DETECTOR_FIELDS = {
  builtin: { required: [], allowed: [] },
  webhook: { required: ["name", "url"], allowed: ["name", "url", "timeout_ms", "headers", "on_error"] },
  onnx: { required: ["name", "path"], allowed: ["name", "path", "on_error"] },
} as const;

// One object with a type rather than a union of three, so the operator's CRDs (structural schemas, no oneOf) can carry
// it; which fields each type takes is checked below.
export const detectorSchema = z
  .strictObject({
    type: oneOf(
      DETECTOR_TYPES,
      "builtin: the classifier in the gateway; webhook: a service called over HTTP; onnx: a model file run in process",
    ),
    name: nameField("Detector name, for audit and metrics (webhook:<name>, onnx:<name>)").optional(),
    url: httpUrl("webhook: where the text is POSTed for scoring (docs/firewall-detectors.md)").optional(),
    timeout_ms: intInRange(WEBHOOK_TIMEOUT_MS.min, WEBHOOK_TIMEOUT_MS.max)
      .describe(
        `webhook: per-call timeout in milliseconds (${WEBHOOK_TIMEOUT_MS.min}-${WEBHOOK_TIMEOUT_MS.max}, default ${WEBHOOK_TIMEOUT_MS.fallback}); a call past it counts as no answer`,
      )
      .optional(),
    headers: z
      .record(z.string(), z.string({ error: "must be a string" }), {
        error: "must be a map of header values",
      })
      .describe(
        "webhook: headers sent with each call (e.g. authorization: Bearer ${DETECTOR_KEY}); never logged",
      )
      .optional(),
    path: nameField("onnx: directory with model.onnx, tokenizer.json and config.json").optional(),
    on_error: oneOf(
      DETECTOR_ERROR_ACTIONS,
      "webhook, onnx: when the detector gives no answer, block the message or let it through (default block)",
    ).optional(),
  })
  .superRefine((detector, ctx) => {
    const fields = DETECTOR_FIELDS[detector.type];
    for (const field of fields.required) {
      if (detector[field] === undefined) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `is required for a detector of type ${detector.type}`,
        });
      }
    }
    for (const field of ["name", "url", "timeout_ms", "headers", "path", "on_error"] as const) {
      if (detector[field] !== undefined && !(fields.allowed as readonly string[]).includes(field)) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `means nothing for a detector of type ${detector.type}`,
        });
      }
    }
  });

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
