// Runs the MCP project's conformance suite (`conformance server --suite all`) against a URL and returns every
// check it recorded, read from the checks.json files it writes (one directory per scenario).
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export type CheckStatus = "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";

export interface Check {
  scenario: string;
  id: string;
  status: CheckStatus;
  errorMessage?: string;
}

const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve("@modelcontextprotocol/conformance/package.json")), "dist/index.js");

export async function runConformance(url: string): Promise<Check[]> {
  const outputDir = await mkdtemp(join(tmpdir(), "svc-conformance-"));
  try {
    // The suite exits 1 when a check fails: that is a result to read, not an error to throw.
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [cli, "server", "--url", url, "--suite", "all", "--output-dir", outputDir],
        { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
        (error) => (error && error.code === undefined ? reject(error) : resolve()),
      );
    });
    const checks: Check[] = [];
    for (const entry of await readdir(outputDir)) {
      // "server-<scenario>-<ISO timestamp with dashes>"
      const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
      const raw = JSON.parse(await readFile(join(outputDir, entry, "checks.json"), "utf8")) as Omit<
        Check,
        "scenario"
      >[];
      for (const check of raw) {
        checks.push({
          scenario,
          id: check.id,
          status: check.status,
          ...(check.errorMessage ? { errorMessage: check.errorMessage } : {}),
        });
      }
    }
    if (checks.length === 0) throw new Error(`conformance suite wrote no results for ${url}`);
    return checks;
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

/** "scenario/check-id" for every check with the given status. */
export function keysWithStatus(checks: Check[], status: CheckStatus): Set<string> {
  return new Set(
    checks.filter((check) => check.status === status).map((check) => `${check.scenario}/${check.id}`),
  );
}
