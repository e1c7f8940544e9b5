import { nearestKey } from "@svc-mcp/gateway/config";

/** node:util parseArgs errors in the CLI's words: the option at fault, and the one probably meant. */
export function describeArgsError(error: Error & { code?: string }, known: readonly string[]): string {
  const option = /'(-[^' ]*)/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) {
    const suggestion = nearestKey(option.replace(/^-+/, ""), known);
    return `unknown option '${option}'${suggestion === undefined ? "" : ` (did you mean '--${suggestion}'?)`}`;
  }
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option)
    return `option '${option}' needs a value`;
  return error.message;
}
