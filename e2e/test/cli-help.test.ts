import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./support/paths.ts";

// The three CLIs answer alike: `--version` prints the version of their package.json, and the help of the
// tool and of every command has a Usage line and an Options section whose descriptions start in one column.
const run = promisify(execFile);

const CLIS = [
  { bin: "framework/bin/svc.js", pkg: "framework", commands: [["init"], ["build"], ["run"], ["dev"]] },
  {
    bin: "gateway/bin/svc-gateway.js",
    pkg: "gateway",
    commands: [["start"], ["validate"], ["inspect"], ["audit", "verify"]],
  },
  { bin: "operator/bin/svc-operator.js", pkg: "operator", commands: [["run"], ["render"]] },
];

async function output(bin: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repoRoot, bin), ...args]);
  return stdout;
}

/** The column where the descriptions of the Options section start: one per option line, or, for an option
 *  too long for the column, the line after it that carries its description. */
function optionColumns(help: string): number[] {
  const section = help.split("\nOptions:\n")[1];
  if (section === undefined) throw new Error(`no Options section in:\n${help}`);
  const lines = section.split("\n\n")[0]?.split("\n") ?? [];
  const columns: number[] = [];
  for (const [index, line] of lines.entries()) {
    if (!/^\s+-/.test(line)) continue;
    const described = /^\s+-\S*(?:,? -\S+)*(?: [A-Z_|]+)?\s{2,}(?=\S)/.exec(line);
    const continued = /^\s+(?=\S)/.exec(lines[index + 1] ?? "");
    if (described) columns.push(described[0].length);
    else if (continued) columns.push(continued[0].length);
    else throw new Error(`option without a description: "${line}"`);
  }
  return columns;
}

describe("svc, svc-gateway and svc-operator", () => {
  it.each(CLIS)(
    "$bin --version prints its package.json version",
    async ({ bin, pkg }) => {
      const { version } = JSON.parse(readFileSync(join(repoRoot, pkg, "package.json"), "utf8")) as {
        version: string;
      };
      expect(await output(bin, ["--version"])).toBe(`${version}\n`);
      expect(await output(bin, ["-v"])).toBe(`${version}\n`);
    },
    60_000,
  );

  it.each(CLIS)(
    "$bin --help and every command's --help: Usage, aligned Options",
    async ({ bin, commands }) => {
      const helps = await Promise.all([
        output(bin, ["--help"]),
        ...commands.map((command) => output(bin, [...command, "--help"])),
      ]);
      for (const help of helps) {
        expect(help).toMatch(/^(.*\n\n)?Usage: /s);
        const columns = optionColumns(help);
        expect(columns.length).toBeGreaterThan(0);
        expect(new Set(columns).size, help).toBe(1);
        expect(help).toMatch(/-h, --help/);
      }
    },
    60_000,
  );
});
