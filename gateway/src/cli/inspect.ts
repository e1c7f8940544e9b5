import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { firewallPolicySchema } from "../config/firewall-schema.ts";
import { ConfigError, type LoadedConfig, loadConfig } from "../config/index.ts";
import { type CompiledFirewall, compileFirewall, DetectorSet } from "../firewall/detectors.ts";
import { mergeFirewallLayers } from "../firewall/policy.ts";
import {
  type CompiledScrubbing,
  compileScrubbing,
  ENTITY_TYPES,
  HASH_KEY_VARIABLE,
  type PiiFinding,
} from "../pii/index.ts";
import { buildSnapshot } from "../runtime/config-snapshot.ts";

const HELP = `Usage: svc-gateway inspect [--config FILE] [--server NAME] | --all

A dry run of the gateway's message inspectors on sample text, to try a policy before rolling it out.
Reads JSON lines from standard input, one object per line:
  {"text": "...", "direction": "request" | "response"}
and prints one JSON line per non-empty input line, in order:
  {"text": "<after scrubbing>", "findings": [{"inspector": "pii", "entity": "EMAIL_ADDRESS",
   "start": 10, "end": 27, "score": 0.9}, {"inspector": "firewall", "detector": "builtin", "score": 0.03,
   "threshold": 0.5, "rules": []}], "blocked": false, "score": 0.03}
start and end are character offsets (UTF-16 code units, as in JavaScript) into the input text. The firewall
reads the scrubbed text, as the gateway does; every configured detector is asked (the gateway stops at the
first detection). "score" is the highest firewall score (null when the firewall is off), "blocked" whether
block mode would refuse the message. A line that cannot be read gets {"error": "..."} instead, and the exit
status is then 1.

The inspectors are the ones the request path runs, built from the configuration exactly as the gateway builds
them: PII scrubbing, then the prompt-injection firewall.

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
  return { scrubbing: route.scrubbing, firewall: route.firewall, detectors: snapshot.detectors };
}

/** The answer for one input line. */
async function inspectLine(line: string, inspectors: Inspectors): Promise<Record<string, unknown>> {
  let input: unknown;
  try {
    input = JSON.parse(line);
  } catch (error) {
    return { error: `not JSON: ${(error as Error).message}` };
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { error: 'expected an object {"text": "...", "direction": "request" | "response"}' };
  }
  const { text, direction } = input as { text?: unknown; direction?: unknown };
  if (typeof text !== "string") return { error: '"text" must be a string' };
  if (direction !== "request" && direction !== "response") {
    return { error: '"direction" must be "request" or "response"' };
  }
  const scrubbed = inspectors.scrubbing?.scrubText(text);
  const findings: Array<Record<string, unknown>> = (scrubbed?.findings ?? []).map((finding: PiiFinding) => ({
    inspector: "pii",
    entity: finding.entity,
    start: finding.start,
    end: finding.end,
    score: finding.score,
  }));
  const after = scrubbed?.value ?? text;
  const { firewall } = inspectors;
  if (firewall === undefined) return { text: after, findings, blocked: false, score: null };
  const threshold = firewall.settings.thresholds[direction];
  const block = firewall.settings.mode === "block";
  let blocked = false;
  let top: number | null = null;
  for (const { detector, onError } of firewall.detectors) {
    try {
      const detection = await detector.score(after, direction);
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
  return { text: after, findings, blocked, score: top };
}

async function inspectLines(inspectors: Inspectors): Promise<number> {
  let failed = false;
  let number = 0;
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    number++;
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
