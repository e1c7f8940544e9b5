// Usage errors of the svc CLI, worded alike for every command: `svc <command>: <what is wrong>`, the usage
// hint, exit 2. No project is needed for any of them.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { runToEnd, SVC_BIN } from "./helpers/processes.ts";

describe("svc usage errors", () => {
  it.each([
    [["init"], "svc init: a directory is required: svc init DIR"],
    [["init", "a", "b"], "svc init: unexpected argument 'b'"],
    [["init", "--bogus"], "svc init: unknown option '--bogus'"],
    [["build", "--bogus"], "svc build: unknown option '--bogus'"],
    [["run", "--port"], "svc run: option '--port' needs a value"],
  ])(
    "svc %j",
    async (args, message) => {
      const result = await runToEnd(SVC_BIN, args, { cwd: tmpdir() });
      expect(result.code).toBe(2);
      expect(result.output).toContain(`${message}\nRun 'svc ${args[0]} --help' for usage.`);
    },
    60_000,
  );
});
