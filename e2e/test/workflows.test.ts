import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "./support/paths.ts";

// The GitHub workflows cannot run here; what they depend on can be checked: each parses, and every `npm run X`
// and `bash FILE` they name exists in this repository.
const directory = join(repoRoot, ".github", "workflows");
const scripts = (
  JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts;

interface Workflow {
  on: unknown;
  jobs: Record<
    string,
    { "runs-on": string; "timeout-minutes"?: number; steps: { run?: string; uses?: string }[] }
  >;
}

describe("GitHub workflows", () => {
  const files = readdirSync(directory).filter((name) => name.endsWith(".yml"));

  it("exist for the test suite and the kind run", () => {
    expect(files.sort()).toEqual(["ci.yml", "e2e-kind.yml"]);
  });

  it.each(files)("%s parses, bounds its time, and runs only what this repository has", (file) => {
    const workflow = parse(readFileSync(join(directory, file), "utf8")) as Workflow;
    expect(workflow.on).toBeDefined();
    for (const job of Object.values(workflow.jobs)) {
      expect(job["runs-on"]).toBe("ubuntu-latest");
      expect(job["timeout-minutes"]).toBeGreaterThan(0);
      const commands = job.steps.flatMap((step) => (step.run === undefined ? [] : [step.run]));
      expect(commands.length).toBeGreaterThan(0);
      for (const command of commands) {
        for (const [, name] of command.matchAll(/npm run (\S+)/g))
          expect(scripts, command).toHaveProperty([name as string]);
        for (const [, path] of command.matchAll(/bash (\S+)/g))
          expect(existsSync(join(repoRoot, path as string)), command).toBe(true);
      }
    }
  });
});
