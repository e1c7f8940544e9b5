import { readFile } from "node:fs/promises";
import { audienceProblems, gatewayOriginOf } from "./audience-rule.ts";
import { attributeToEnvironment, readCentralizedSettings } from "./centralized.ts";
import type { GatewayConfig } from "./derive.ts";
import { CONFIG_FILE_ENV, findConfigFile } from "./discover.ts";
import { ConfigError, type ConfigProblem, formatPath } from "./problems.ts";
import {
  type DeploymentMode,
  type ValidateTextOptions,
  validateConfigText,
  validateConfigValue,
} from "./validate.ts";

export interface LoadOptions {
  /** A file that overrides discovery (`--config FILE`); `-` reads standard input. */
  configPath?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Stands in for `/` when resolving the absolute search locations (tests). */
  root?: string;
  /** Where `-` reads from; standard input by default. */
  stdin?: AsyncIterable<string | Uint8Array>;
  /** Leave an unset `${VAR}` as written instead of failing (checking rendered YAML before its secrets exist). */
  keepUnsetVariables?: boolean;
}

export interface LoadedConfig {
  config: GatewayConfig;
  mode: DeploymentMode;
  /** The file read, `-` for standard input, or `environment` in centralized mode. */
  source: string;
  /** Things worth a log line that do not stop loading. */
  warnings: string[];
}

/** Finds, reads, interpolates and validates the configuration; throws ConfigError listing every problem. */
export async function loadConfig(options: LoadOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const validate = { env, keepUnsetVariables: options.keepUnsetVariables ?? false };
  const deployment = (config: GatewayConfig) =>
    validate.keepUnsetVariables ? [] : deploymentProblems(config, env);

  if (options.configPath === "-") {
    return fromText(await readAll(options.stdin ?? process.stdin), "-", validate, [], deployment);
  }
  if (options.configPath !== undefined) {
    return fromText(await readConfigFile(options.configPath), options.configPath, validate, [], deployment);
  }

  const found = await findConfigFile({
    env,
    cwd,
    ...(options.root === undefined ? {} : { root: options.root }),
  });
  if (found.path !== undefined)
    return fromText(await readConfigFile(found.path), found.path, validate, found.warnings, deployment);

  const centralized = readCentralizedSettings(env);
  if (centralized.kind === "incomplete") throw new ConfigError(centralized.problems, "environment");
  if (centralized.kind === "absent") {
    throw new ConfigError([
      {
        path: "",
        message:
          `no configuration file found; searched, in order: ${found.searched.join(", ")}. ` +
          `Pass --config FILE or set ${CONFIG_FILE_ENV}`,
      },
    ]);
  }
  const result = validateConfigValue(centralized.value);
  if (!result.ok) throw new ConfigError(result.problems.map(attributeToEnvironment), "environment");
  const problems = deployment(result.config);
  if (problems.length > 0) throw new ConfigError(problems.map(attributeToEnvironment), "environment");
  return { config: result.config, mode: "centralized", source: "environment", warnings: found.warnings };
}

/**
 * Rules on the configuration together with the environment the gateway runs in (the audience of a provider without
 * api_identifiers needs SVC_PUBLIC_URL). Not applied with keepUnsetVariables: YAML checked before its pod exists has
 * no deployment environment to judge by.
 */
function deploymentProblems(config: GatewayConfig, env: Record<string, string | undefined>): ConfigProblem[] {
  const origin = gatewayOriginOf(env.SVC_PUBLIC_URL, config.oauth_server?.issuer);
  return audienceProblems(config.identity_providers, origin).map(({ path, message }) => ({
    path: formatPath(path),
    message,
  }));
}

function fromText(
  text: string,
  source: string,
  options: ValidateTextOptions,
  warnings: string[],
  deployment: (config: GatewayConfig) => ConfigProblem[],
): LoadedConfig {
  const result = validateConfigText(text, options);
  if (!result.ok) throw new ConfigError(result.problems, source);
  const problems = deployment(result.config);
  if (problems.length > 0) throw new ConfigError(problems, source);
  return { config: result.config, mode: result.mode, source, warnings };
}

async function readConfigFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    throw new ConfigError([{ path: "", message: `cannot read configuration file ${file}: ${reason}` }]);
  }
}

async function readAll(stream: AsyncIterable<string | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
