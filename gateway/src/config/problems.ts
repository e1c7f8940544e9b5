/** One thing wrong with a configuration, located as precisely as the source allows. */
export interface ConfigProblem {
  /** Where in the configuration, e.g. `servers[1].rbac_mode`; empty for the document as a whole. */
  path: string;
  message: string;
  /** 1-based line and column in the YAML source, when the source has them. */
  line?: number;
  column?: number;
}

/** `servers[1].rbac_mode (line 40:5): must be one of: allow, deny` */
export function formatProblem(problem: ConfigProblem): string {
  const line = problem.line === undefined ? undefined : `line ${problem.line}:${problem.column ?? 1}`;
  if (problem.path === "") return line === undefined ? problem.message : `${line}: ${problem.message}`;
  return `${problem.path}${line === undefined ? "" : ` (${line})`}: ${problem.message}`;
}

/** Thrown by the loader; the message lists every problem, one per line, so a log line shows them all. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  readonly source: string | undefined;

  constructor(problems: ConfigProblem[], source?: string) {
    const heading =
      source === undefined ? "invalid gateway configuration" : `invalid gateway configuration in ${source}`;
    super(`${heading}:\n${problems.map(formatProblem).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
    this.source = source;
  }
}

export type PathSegment = string | number;

/** `["servers", 1, "rbac_mode"]` → `servers[1].rbac_mode` */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
