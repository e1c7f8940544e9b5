import { parseArgs } from "node:util";
import { firewallPolicySchema } from "../config/firewall-schema.ts";
import { ConfigError, type LoadedConfig, loadConfig } from "../config/index.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { type CompiledFirewall, compileFirewall, DetectorSet } from "../firewall/detectors.ts";
import { mergeFirewallLayers } from "../firewall/policy.ts";
import { textInspectors } from "../inspect/chain.ts";
import { inspectRequest, responseInspection } from "../inspect/inspector.ts";
import { newRequestRecord } from "../inspect/request-record.ts";
import {
  type CompiledScrubbing,
  compileScrubbing,
  ENTITY_TYPES,
  HASH_KEY_VARIABLE,
  type PiiFinding,
} from "../pii/index.ts";
import { buildSnapshot } from "../runtime/config-snapshot.ts";
import type { JsonRpcMessage } from "../sse/json-rpc.ts";

const HELP = `Usage: svc-gateway inspect [--config FILE] [--server NAME] | --all

A dry run of the gateway's message inspectors, to try a policy before rolling it out. They are built from the
configuration exactly as the gateway builds them, and run in the request path's order: the prompt-injection
firewall on the text as sent, then PII scrubbing.
Reads JSON Lines from standard input (lines end at "\\n" only; U+2028, U+2029 and U+0085 are ordinary characters
inside a JSON string), one object per line, and prints one JSON line per non-empty input line, in order.

A text, read as one text a model reads (a tool result's text, a plain argument):
  {"text": "...", "direction": "request" | "response"}
  → {"text": "<after scrubbing>", "findings": [{"inspector": "pii", "entity": "EMAIL_ADDRESS",
     "start": 10, "end": 27, "score": 0.9}, {"inspector": "firewall", "detector": "builtin", "score": 0.03,
     "threshold": 0.5, "rules": []}], "blocked": false, "score": 0.03}
  start and end are character offsets (UTF-16 code units, as in JavaScript) into the input text; every configured
  detector is asked (the gateway stops at the first detection). "score" is the highest firewall score (null when
  the firewall is off), "blocked" whether block mode would refuse the text.

A whole MCP message, inspected exactly as live (its method, allow_tools, allow_fields, JSON field names as
context, the scrubbing bounds); for a response, the request it answers may be given (else it is read as an
answer of unknown request, every result shape inspected):
  {"message": <JSON-RPC message>, "direction": "request" | "response", "request": <JSON-RPC request>}
  → {"message": <what would be forwarded, or null>, "refused": null | {"code": "injection_detected",
     "message": "..."}, "findings": [{"inspector": "pii", "direction": "response", "method": "tools/call",
     "counts": {"EMAIL_ADDRESS": 1}}, {"inspector": "firewall", "detector": "builtin", "score": 0.91,
     "threshold": 0.5, "rules": [], "blocked": true}], "blocked": true}

A line that cannot be read gets {"error": "..."} instead, and the exit status is then 1.

Options:
  -c, --config FILE  configuration file (default: the search order of svc-gateway start)
      --server NAME  inspect as this server's policy: the gateway's and the server's merged (default: the
                     gateway's policy alone)
      --all          every built-in inspector on with its defaults (all recognizers, opt-in ones included;
                     the firewall's built-in detector in block mode at its default thresholds); no
                     configuration is read
  -h, --help         show this help

Exit status: 0 every line inspected, 1 a line could not be read, 2 usage or configuration error.
`;

interface Values {
  config?: string;
  server?: string;
  all?: boolean;
  help?: boolean;
}

export async function run(argv: string[]): Promise<number> {
  let values: Values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: "string", short: "c" },
        server: { type: "string" },
        all: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return usageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.all && (values.config !== undefined || values.server !== undefined)) {
    return usageError(
      "--all runs every built-in inspector and reads no configuration: drop --config and --server",
    );
  }
  let inspectors: Inspectors;
  try {
    inspectors = values.all ? everyInspector() : await fromConfig(values.config, values.server);
  } catch (error) {
    const message =
      error instanceof ConfigError || error instanceof UsageError ? error.message : String(error);
    process.stderr.write(`svc-gateway inspect: ${message}\n`);
    return 2;
  }
  try {
    await inspectors.detectors.ready(values.config ?? "the configuration");
  } catch (error) {
    process.stderr.write(`svc-gateway inspect: ${(error as Error).message}\n`);
    await inspectors.detectors.close();
    return 2;
  }
  try {
    return await inspectLines(inspectors);
  } finally {
    await inspectors.detectors.close();
  }
}

/** What runs on each line, built as the gateway builds it; `detectors` is closed at the end. */
interface Inspectors {
  scrubbing: CompiledScrubbing | undefined;
  firewall: CompiledFirewall | undefined;
  detectors: DetectorSet;
  /** The server whose policy runs (--server), for the messages' error texts. */
  server?: string;
}

class UsageError extends Error {}

function usageError(message: string): number {
  process.stderr.write(`svc-gateway inspect: ${message}\n\n${HELP}`);
  return 2;
}

/** Every recognizer on, the opt-in ones too; the firewall's built-in detector in block mode at its defaults. */
function everyInspector(): Inspectors {
  const detectors = new DetectorSet();
  const merged = mergeFirewallLayers(
    firewallPolicySchema.parse({ enabled: true, mode: "block" }),
    undefined,
    [],
  );
  if (!("settings" in merged) || merged.settings === undefined)
    throw new Error("the default firewall did not compile");
  return { scrubbing: everyRecognizer(), firewall: compileFirewall(merged.settings, detectors), detectors };
}

function everyRecognizer(): CompiledScrubbing {
  const compiled = compileScrubbing([
    {
      enabled: true,
      sensitive_fields: [],
      whitelist_fields: [],
      custom_rules: [],
      recognizers: ENTITY_TYPES.map((entity_type) => ({ entity_type, enabled: true })),
    },
  ]);
  if ("problems" in compiled) throw new Error(compiled.problems.map((p) => p.message).join("; "));
  return compiled;
}

/** The policy the gateway would run for `server` (or the gateway-wide one), built by the same code as at start. */
async function fromConfig(configPath: string | undefined, server: string | undefined): Promise<Inspectors> {
  const loaded: LoadedConfig = await loadConfig({ configPath, env: process.env });
  if (server === undefined) {
    const compiled = compileScrubbing([loaded.config.gateway_policy.scrubbing], {
      hashKey: process.env[HASH_KEY_VARIABLE],
      layerPaths: ["gateway_policy.scrubbing"],
    });
    if ("problems" in compiled) throw new ConfigError(compiled.problems, loaded.source);
    const merged = mergeFirewallLayers(loaded.config.gateway_policy.firewall, undefined, []);
    // validate() already refused a configuration with layer problems; none can be left here.
    if ("problems" in merged) throw new Error(merged.problems.map((p) => p.message).join("; "));
    const detectors = new DetectorSet();
    return {
      scrubbing: compiled.enabled ? compiled : undefined,
      firewall: merged.settings === undefined ? undefined : compileFirewall(merged.settings, detectors),
      detectors,
    };
  }
  const snapshot = buildSnapshot(loaded, process.env, 1, false);
  const route = snapshot.routes.get(server);
  if (route === undefined) {
    await snapshot.detectors.close();
    const names = loaded.config.servers.map((s) => s.name).join(", ") || "none";
    throw new UsageError(`no server named '${server}' in ${loaded.source} (servers: ${names})`);
  }
  return { scrubbing: route.scrubbing, firewall: route.firewall, detectors: snapshot.detectors, server };
}

/** A line longer than the gateway reads in one request or answer is refused, as the gateway refuses it. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

/** The answer for one input line. */
async function inspectLine(line: string, inspectors: Inspectors): Promise<Record<string, unknown>> {
  if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
    return { error: `longer than ${MAX_LINE_BYTES} bytes, more than the gateway reads in one message` };
  }
  let input: unknown;
  try {
    input = JSON.parse(line);
  } catch (error) {
    return { error: `not JSON: ${(error as Error).message}` };
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return {
      error: 'expected an object {"text": "...", "direction": "request" | "response"} or {"message": ...}',
    };
  }
  const { text, direction, message, request } = input as Record<string, unknown>;
  if (direction !== "request" && direction !== "response") {
    return { error: '"direction" must be "request" or "response"' };
  }
  if (message !== undefined) return inspectMessage(message, direction, request, inspectors);
  if (typeof text !== "string") return { error: '"text" must be a string' };
  return inspectText(text, direction, inspectors);
}

async function inspectText(
  text: string,
  direction: "request" | "response",
  inspectors: Inspectors,
): Promise<Record<string, unknown>> {
  const findings: Array<Record<string, unknown>> = [];
  const { firewall } = inspectors;
  let blocked = false;
  let top: number | null = null;
  // The firewall first, on the text as sent, as the request path runs it (inspect/chain.ts).
  if (firewall !== undefined) {
    const threshold = firewall.settings.thresholds[direction];
    const block = firewall.settings.mode === "block";
    for (const { detector, onError } of firewall.detectors) {
      try {
        const detection = await detector.score(text, direction);
        findings.push({
          inspector: "firewall",
          detector: detector.name,
          score: detection.score,
          threshold,
          rules: detection.rules ?? [],
        });
        top = Math.max(top ?? 0, detection.score);
        if (detection.score >= threshold && block) blocked = true;
      } catch (error) {
        findings.push({
          inspector: "firewall",
          detector: detector.name,
          score: null,
          threshold,
          unavailable: (error as Error).message,
        });
        if (onError === "block" && block) blocked = true;
      }
    }
  }
  const scrubbed = inspectors.scrubbing?.scrubText(text);
  const pii = (scrubbed?.findings ?? []).map((finding: PiiFinding) => ({
    inspector: "pii",
    entity: finding.entity,
    start: finding.start,
    end: finding.end,
    score: finding.score,
  }));
  return { text: scrubbed?.value ?? text, findings: [...pii, ...findings], blocked, score: top };
}

/** One whole message through the same inspector lists the request path builds (inspect/chain.ts). */
async function inspectMessage(
  message: unknown,
  direction: "request" | "response",
  request: unknown,
  inspectors: Inspectors,
): Promise<Record<string, unknown>> {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return { error: '"message" must be a JSON-RPC message (an object)' };
  }
  if (request !== undefined && (typeof request !== "object" || request === null || Array.isArray(request))) {
    return { error: '"request" must be the JSON-RPC request the message answers (an object)' };
  }
  const findings: Array<Record<string, unknown>> = [];
  const lists = textInspectors(inspectors, {
    onScrubbed: (_record, scrubbedDirection, method, counts) =>
      findings.push({ inspector: "pii", direction: scrubbedDirection, method: method ?? null, counts }),
    onFirewallFinding: (_record, finding) =>
      findings.push({
        inspector: "firewall",
        detector: finding.detector,
        score: finding.score,
        threshold: finding.threshold,
        rules: finding.rules,
        blocked: finding.blocked,
        ...(finding.unavailable === undefined ? {} : { unavailable: finding.unavailable }),
      }),
  });
  // A response with its request is read as the answer to it; without, as on a resumed stream: of unknown request.
  const record = newRequestRecord(
    "inspect",
    direction === "request" || request !== undefined ? "POST" : "GET",
    undefined,
  );
  record.server = inspectors.server ?? "";
  const asMessage = message as JsonRpcMessage;
  record.messages =
    direction === "request" ? [asMessage] : request === undefined ? [] : [request as JsonRpcMessage];
  try {
    if (direction === "request") {
      const inspected = await inspectRequest(lists.request, record, [asMessage]);
      return { message: inspected.messages[0] ?? null, refused: null, findings, blocked: false };
    }
    const inspection = responseInspection(lists.response, record);
    const bytes = Buffer.from(JSON.stringify(message));
    const out = inspection === undefined ? bytes : await inspection.json(bytes);
    const forwarded = JSON.parse(out.toString("utf8")) as JsonRpcMessage;
    const refused = isRefusal(forwarded, asMessage);
    return {
      message: forwarded,
      refused,
      findings,
      blocked: refused !== null,
    };
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { message: null, refused: { code: error.code, message: error.message }, findings, blocked: true };
  }
}

/** A response the inspection replaced by the gateway's JSON-RPC error: the refusal it carries. */
function isRefusal(forwarded: JsonRpcMessage, original: JsonRpcMessage): Record<string, unknown> | null {
  if (original.error !== undefined || typeof forwarded.error !== "object" || forwarded.error === null)
    return null;
  const error = forwarded.error as { message?: unknown; data?: { reason?: unknown } };
  return { code: error.data?.reason ?? null, message: error.message ?? null };
}

async function inspectLines(inspectors: Inspectors): Promise<number> {
  let failed = false;
  let number = 0;
  for await (const raw of jsonLines(process.stdin)) {
    number++;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    const answer = await inspectLine(line, inspectors);
    if ("error" in answer) {
      failed = true;
      answer.error = `line ${number}: ${answer.error as string}`;
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  return failed ? 1 : 0;
}

/**
 * The lines of a JSON Lines stream: split on "\n" alone, as JSON Lines are (readline would also split on U+2028,
 * U+2029 and U+0085, which are legal inside a JSON string, and turn one message into three broken ones).
 */
async function* jsonLines(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of input) {
    pending += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    let end = pending.indexOf("\n");
    while (end !== -1) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
      end = pending.indexOf("\n");
    }
  }
  pending += decoder.decode();
  if (pending !== "") yield pending;
}
