// The MCP conformance suite against the SDK reference server, directly and through the gateway: through the
// gateway, every check that passes directly must pass too (the gateway is transparent).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ReferenceServer, startReferenceServer } from "../fixtures/reference-server/server.ts";
import { type Check, keysWithStatus, runConformance } from "./run-conformance.ts";
import { type SpawnedGateway, spawnGateway, writeGatewayConfig } from "./spawn-gateway.ts";

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
let gateway: SpawnedGateway | undefined;
let configDir: string | undefined;
let direct: Check[];
let throughGateway: Check[];

beforeAll(async () => {
  reference = await startReferenceServer();
  configDir = await mkdtemp(join(tmpdir(), "svc-conformance-gateway-"));
  gateway = await spawnGateway(await writeGatewayConfig(configDir, { reference: reference.url }));
  // One run at a time: the two share 2 cores with the rest of the suite.
  direct = await runConformance(reference.url);
  throughGateway = await runConformance(`${gateway.url}/reference/mcp`);
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await reference?.close();
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe("MCP conformance suite (server, --suite all)", () => {
  it("passes against the reference server directly, except the listed expected failures", async () => {
    const expected = await expectedFailures();
    for (const entry of expected) expect(entry.reason?.trim(), `reason for ${entry.check}`).toBeTruthy();
    const failing = [...keysWithStatus(direct, "FAILURE")].sort();
    expect(failing).toEqual(expected.map((entry) => entry.check).sort());
    // The whole suite ran (32 server scenarios in this version) and the checks did pass, not just not fail.
    const scenarios = new Set(direct.map((check) => check.scenario));
    expect(scenarios.size).toBeGreaterThanOrEqual(32);
    expect(keysWithStatus(direct, "SUCCESS").size).toBeGreaterThanOrEqual(40);
  });

  it("passes through the gateway every check that passes directly", () => {
    const passedThrough = keysWithStatus(throughGateway, "SUCCESS");
    const lost = [...keysWithStatus(direct, "SUCCESS")].filter((key) => !passedThrough.has(key));
    const why = lost.map((key) => {
      const seen = throughGateway.filter((check) => `${check.scenario}/${check.id}` === key);
      return `${key}: ${seen.map((check) => `${check.status} ${check.errorMessage ?? ""}`).join("; ") || "not run"}`;
    });
    expect(lost, why.join("\n")).toEqual([]);
    // A check id can repeat within a scenario: none of them may fail through the gateway either.
    const failedThrough = [...keysWithStatus(throughGateway, "FAILURE")].filter(
      (key) => !keysWithStatus(direct, "FAILURE").has(key),
    );
    expect(failedThrough).toEqual([]);
  });
});
