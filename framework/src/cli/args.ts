import { resolve } from "node:path";
import { parseArgs } from "node:util";

export class UsageError extends Error {
  override name = "UsageError";
}

type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

/** parseArgs with `--project DIR` and `--help` on every command; unknown options are usage errors. */
export function parseCommandArgs<O extends OptionSpec>(argv: string[], options: O) {
  try {
    const parsed = parseArgs({
      args: argv,
      options: { ...options, project: { type: "string" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const projectDir = resolve(typeof values.project === "string" ? values.project : ".");
    return { values, positionals: parsed.positionals, projectDir, help: values.help === true };
  } catch (error) {
    throw new UsageError(usageMessage(error as Error & { code?: string }));
  }
}

/** node:util's wording, shortened to the house style: what is wrong, naming the argument. */
function usageMessage(error: Error & { code?: string }): string {
  const option = /'(-[^' ]*)/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option '${option}'`;
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option)
    return `option '${option}' needs a value`;
  return error.message;
}

export function parsePort(value: string | boolean | undefined, flag = "--port"): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (typeof value !== "string" || !/^\d+$/.test(value) || port > 65535) {
    throw new UsageError(`${flag}: '${String(value)}' is not a port number (0-65535)`);
  }
  return port;
}

/**
 * The options of the commands that serve a project (`svc run`, `svc dev`): `--port`, `--host`, `--project`, no
 * positionals. `undefined` when `--help` was asked for.
 */
export function parseServeArgs(
  argv: string[],
): { projectDir: string; port: number | undefined; host: string | undefined } | undefined {
  const { values, positionals, projectDir, help } = parseCommandArgs(argv, {
    port: { type: "string" },
    host: { type: "string" },
  });
  if (help) return undefined;
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  return {
    projectDir,
    port: parsePort(values.port),
    host: typeof values.host === "string" ? values.host : undefined,
  };
}
