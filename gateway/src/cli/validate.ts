import { parseArgs } from "node:util";
import { enabledExporters } from "../audit/exporters/enabled.ts";
import { ConfigError, formatProblem, type LoadedConfig, loadConfig } from "../config/index.ts";

const HELP = `Usage: svc-gateway validate [--config FILE] [--json] [--keep-unset-variables]

Checks a gateway configuration: finds it like the gateway does (SVC_CONFIG_FILE,
/etc/svc-gateway/config.yaml, /etc/svc-gateway/config.yml, ./svc-gateway.yaml,
./svc-gateway.yml), substitutes \${VAR} and \${VAR:default}, and applies every rule.

Options:
  -c, --config FILE  validate FILE instead of searching; "-" reads standard input
      --json         print the result as JSON
      --keep-unset-variables
                     leave an unset \${VAR} as written instead of failing: checks
                     YAML rendered for a pod whose secrets are not in this shell
  -h, --help         show this help

Exit status: 0 valid, 1 invalid (one line per problem), 2 usage error.
`;

export async function run(argv: string[]): Promise<number> {
  let values: { config?: string; json?: boolean; help?: boolean; "keep-unset-variables"?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: "string", short: "c" },
        json: { type: "boolean" },
        "keep-unset-variables": { type: "boolean" },
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

  const summary = summarize(loaded);
  if (values.json) process.stdout.write(`${JSON.stringify({ valid: true, ...summary }, null, 2)}\n`);
  else process.stdout.write(renderSummary(summary));
  for (const warning of loaded.warnings) process.stderr.write(`warning: ${warning}\n`);
  return 0;
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
