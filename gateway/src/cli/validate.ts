import { parseArgs } from "node:util";
import { enabledExporters } from "../audit/exporters/enabled.ts";
import { ConfigError, formatProblem, type LoadedConfig, loadConfig } from "../config/index.ts";
import { HASH_KEY_VARIABLE, MIN_HASH_KEY_LENGTH } from "../pii/index.ts";
import { buildSnapshot } from "../runtime/config-snapshot.ts";

const HELP = `Usage: svc-gateway validate [--config FILE] [--json] [--keep-unset-variables] [--skip-model-files]

Checks a gateway configuration: finds it like the gateway does (SVC_CONFIG_FILE,
/etc/svc-gateway/config.yaml, /etc/svc-gateway/config.yml, ./svc-gateway.yaml,
./svc-gateway.yml), substitutes \${VAR} and \${VAR:default}, applies every rule,
and runs every check svc-gateway start runs that needs no network: each server's
scrubbing and firewall compiled (SVC_SCRUB_HASH_KEY for hash rules, as this shell
has it), model files loaded.

Options:
  -c, --config FILE  validate FILE instead of searching; "-" reads standard input
      --json         print the result as JSON
      --keep-unset-variables
                     leave an unset \${VAR} as written instead of failing: checks
                     YAML rendered for a pod whose secrets are not in this shell
                     (SVC_SCRUB_HASH_KEY included)
      --skip-model-files
                     do not load the firewall's model files: checks YAML for a
                     machine where they are mounted and this one has none
  -h, --help         show this help

Exit status: 0 valid, 1 invalid (one line per problem), 2 usage error.
`;

export async function run(argv: string[]): Promise<number> {
  let values: {
    config?: string;
    json?: boolean;
    help?: boolean;
    "keep-unset-variables"?: boolean;
    "skip-model-files"?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: "string", short: "c" },
        json: { type: "boolean" },
        "keep-unset-variables": { type: "boolean" },
        "skip-model-files": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    process.stderr.write(`svc-gateway validate: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }

  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig({
      ...(values.config === undefined ? {} : { configPath: values.config }),
      keepUnsetVariables: values["keep-unset-variables"] ?? false,
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ valid: false, source: error.source ?? null, problems: error.problems }, null, 2)}\n`,
      );
    } else {
      const heading =
        error.source === undefined ? "invalid configuration" : `invalid configuration: ${error.source}`;
      process.stderr.write(`${heading}\n${error.problems.map(formatProblem).join("\n")}\n`);
    }
    return 1;
  }

  // Everything else `start` refuses a configuration for that needs no network: compiling each server's scrubbing (a
  // hash rule without SVC_SCRUB_HASH_KEY) and firewall, and loading its model files.
  const refusal = await startTimeRefusal(
    loaded,
    values["keep-unset-variables"] ?? false,
    values["skip-model-files"] ?? false,
  );
  if (refusal !== undefined) {
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ valid: false, source: refusal.source ?? null, problems: refusal.problems }, null, 2)}\n`,
      );
    } else {
      process.stderr.write(
        `invalid configuration: ${refusal.source ?? loaded.source}\n${refusal.problems.map(formatProblem).join("\n")}\n`,
      );
    }
    return 1;
  }

  const summary = summarize(loaded);
  if (values.json) process.stdout.write(`${JSON.stringify({ valid: true, ...summary }, null, 2)}\n`);
  else process.stdout.write(renderSummary(summary));
  for (const warning of loaded.warnings) process.stderr.write(`warning: ${warning}\n`);
  return 0;
}

/**
 * The configuration built as `start` builds it (runtime/config-snapshot.ts), model files loaded: the ConfigError it
 * would refuse to start with, or undefined. Detectors are closed again (a model file runs in a worker thread).
 */
async function startTimeRefusal(
  loaded: LoadedConfig,
  keepUnsetVariables: boolean,
  skipModelFiles: boolean,
): Promise<ConfigError | undefined> {
  // Secrets not in this shell (--keep-unset-variables): the hash key is one, so its absence is not held against it.
  const env = { ...process.env };
  if (keepUnsetVariables) env[HASH_KEY_VARIABLE] ??= "k".repeat(MIN_HASH_KEY_LENGTH);
  let snapshot: ReturnType<typeof buildSnapshot>;
  try {
    snapshot = buildSnapshot(loaded, env, 1, env.SVC_ALLOW_ANONYMOUS === "true");
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  try {
    if (!skipModelFiles) await snapshot.detectors.ready(loaded.source);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  } finally {
    await snapshot.detectors.close();
  }
}

/** What a reviewer wants to see of a valid configuration; names and counts only, never a secret. */
function summarize({ config, mode, source, warnings }: LoadedConfig) {
  return {
    source,
    mode,
    servers: config.servers.map((s) => ({ name: s.name, url: s.url, enabled: s.enabled })),
    identity_providers: config.identity_providers.map((p) => ({ name: p.name, type: p.type })),
    /** `<type>:<name>` of each enabled exporter: these get the audit trail. */
    exporters: enabledExporters(config.exporters),
    warnings,
  };
}

function renderSummary(summary: ReturnType<typeof summarize>): string {
  const list = (items: string[]) => (items.length === 0 ? "none" : items.join(", "));
  const enabledServers = summary.servers.filter((s) => s.enabled).length;
  return [
    `valid: ${summary.source}`,
    `mode: ${summary.mode}`,
    `servers: ${summary.servers.length} (${enabledServers} enabled): ${list(summary.servers.map((s) => (s.enabled ? s.name : `${s.name} (disabled)`)))}`,
    `identity providers: ${summary.identity_providers.length}: ${list(summary.identity_providers.map((p) => `${p.name} (${p.type})`))}`,
    `exporters enabled: ${summary.exporters.length}: ${list(summary.exporters)}`,
    "",
  ].join("\n");
}
