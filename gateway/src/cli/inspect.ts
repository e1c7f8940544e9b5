import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { ConfigError, type LoadedConfig, loadConfig } from "../config/index.ts";
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
   "start": 10, "end": 27, "score": 0.9}], "blocked": false, "score": null}
start and end are character offsets (UTF-16 code units, as in JavaScript) into the input text. A line that
cannot be read gets {"error": "..."} instead, and the exit status is then 1.

The inspectors are the ones the request path runs, built from the configuration exactly as the gateway builds
them: PII scrubbing today (the prompt-injection firewall will report here too).

Options:
  -c, --config FILE  configuration file (default: the search order of svc-gateway start)
      --server NAME  inspect as this server's policy: the gateway's and the server's merged (default: the
                     gateway's policy alone)
      --all          every built-in inspector on with its defaults (all recognizers, opt-in ones included);
                     no configuration is read
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
  let scrubbing: CompiledScrubbing | undefined;
  try {
    scrubbing = values.all ? everyRecognizer() : await fromConfig(values.config, values.server);
  } catch (error) {
    const message =
      error instanceof ConfigError || error instanceof UsageError ? error.message : String(error);
    process.stderr.write(`svc-gateway inspect: ${message}\n`);
    return 2;
  }
  return inspectLines(scrubbing);
}

class UsageError extends Error {}

function usageError(message: string): number {
  process.stderr.write(`svc-gateway inspect: ${message}\n\n${HELP}`);
  return 2;
}

/** Every recognizer on, the opt-in ones too, with their default replacements. */
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
async function fromConfig(
  configPath: string | undefined,
  server: string | undefined,
): Promise<CompiledScrubbing | undefined> {
  const loaded: LoadedConfig = await loadConfig({ configPath, env: process.env });
  if (server === undefined) {
    const compiled = compileScrubbing([loaded.config.gateway_policy.scrubbing], {
      hashKey: process.env[HASH_KEY_VARIABLE],
      layerPaths: ["gateway_policy.scrubbing"],
    });
    if ("problems" in compiled) throw new ConfigError(compiled.problems, loaded.source);
    return compiled.enabled ? compiled : undefined;
  }
  const route = buildSnapshot(loaded, process.env, 1, false).routes.get(server);
  if (route === undefined) {
    const names = loaded.config.servers.map((s) => s.name).join(", ") || "none";
    throw new UsageError(`no server named '${server}' in ${loaded.source} (servers: ${names})`);
  }
  return route.scrubbing;
}

/** The answer for one input line. */
function inspectLine(line: string, scrubbing: CompiledScrubbing | undefined): Record<string, unknown> {
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
  const scrubbed = scrubbing?.scrubText(text);
  const findings = (scrubbed?.findings ?? []).map((finding: PiiFinding) => ({
    inspector: "pii",
    entity: finding.entity,
    start: finding.start,
    end: finding.end,
    score: finding.score,
  }));
  return { text: scrubbed?.value ?? text, findings, blocked: false, score: null };
}

async function inspectLines(scrubbing: CompiledScrubbing | undefined): Promise<number> {
  let failed = false;
  let number = 0;
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    number++;
    if (line.trim() === "") continue;
    const answer = inspectLine(line, scrubbing);
    if ("error" in answer) {
      failed = true;
      answer.error = `line ${number}: ${answer.error as string}`;
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  return failed ? 1 : 0;
}
