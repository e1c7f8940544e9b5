import { stat } from "node:fs/promises";
import path from "node:path";

/** Environment variable naming the configuration file; the first place searched. */
export const CONFIG_FILE_ENV = "SVC_CONFIG_FILE";

/** The search order after SVC_CONFIG_FILE: the first existing file wins. Relative entries are resolved against the working directory. */
export const CONFIG_FILE_LOCATIONS = [
  "/etc/svc-gateway/config.yaml",
  "/etc/svc-gateway/config.yml",
  "./svc-gateway.yaml",
  "./svc-gateway.yml",
] as const;

export interface DiscoveryOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Prefix for absolute locations; tests point it at a temporary directory standing in for `/`. */
  root?: string;
}

export interface Discovery {
  /** The first existing file, if any. */
  path?: string;
  /** Every place looked at, in order, for the error message when none exists. */
  searched: string[];
  warnings: string[];
}

export async function findConfigFile({ env, cwd, root = "/" }: DiscoveryOptions): Promise<Discovery> {
  const warnings: string[] = [];
  const candidates: string[] = [];
  const fromEnv = env[CONFIG_FILE_ENV];
  if (fromEnv !== undefined && fromEnv !== "") candidates.push(path.resolve(cwd, fromEnv));
  for (const location of CONFIG_FILE_LOCATIONS) {
    candidates.push(path.isAbsolute(location) ? path.join(root, location) : path.resolve(cwd, location));
  }
  for (const [index, candidate] of candidates.entries()) {
    if (await isFile(candidate)) {
      if (index > 0 && fromEnv !== undefined && fromEnv !== "") {
        // The first existing file wins; a dangling SVC_CONFIG_FILE is most likely a typo, so say so.
        warnings.push(`${CONFIG_FILE_ENV}=${fromEnv} does not exist; using ${candidate}`);
      }
      return { path: candidate, searched: candidates.slice(0, index + 1), warnings };
    }
  }
  return { searched: candidates, warnings };
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
