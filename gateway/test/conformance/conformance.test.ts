// The MCP conformance suite against the SDK reference server, directly and through the gateway: through the
// gateway, every check that passes directly must pass too (the gateway is transparent).
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ReferenceServer, startReferenceServer } from "../fixtures/reference-server/server.ts";
import { type Check, keysWithStatus, runConformance } from "./run-conformance.ts";

interface ExpectedFailure {
  check: string;
  reason: string;
}

async function expectedFailures(): Promise<ExpectedFailure[]> {
  const file = new URL("./expected-failures.yaml", import.meta.url);
  const parsed = parse(await readFile(file, "utf8")) as { failures?: ExpectedFailure[] };
  return parsed.failures ?? [];
}

let reference: ReferenceServer;
let direct: Check[];

beforeAll(async () => {
  reference = await startReferenceServer();
  direct = await runConformance(reference.url);
}, 120_000);

afterAll(async () => {
  await reference?.close();
});

describe("MCP conformance suite (server, --suite all)", () => {
  it("passes against the reference server directly, except the listed expected failures", async () => {
    const expected = await expectedFailures();
    for (const entry of expected) expect(entry.reason?.trim(), `reason for ${entry.check}`).toBeTruthy();
    const failing = [...keysWithStatus(direct, "FAILURE")].sort();
    expect(failing).toEqual(expected.map((entry) => entry.check).sort());
    // Every server scenario ran and produced at least one passing check.
    const scenarios = new Set(direct.map((check) => check.scenario));
    expect(scenarios.size).toBeGreaterThanOrEqual(32);
    expect(keysWithStatus(direct, "SUCCESS").size).toBeGreaterThanOrEqual(40);
  });
});
