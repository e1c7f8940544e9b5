// Management credentials written as `${VAR:}` with VAR unset resolve to empty strings: the file loads, group sync is
// off for that provider, and a real `svc-gateway start` says so once, naming the provider and the empty fields.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { type SpawnedGateway, spawnGateway, waitForReadiness } from "../conformance/spawn-gateway.ts";

let dir: string | undefined;
let gateway: SpawnedGateway | undefined;
afterAll(async () => {
  await gateway?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test("empty management credentials: group sync off, one warning at start", async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-group-sync-off-"));
  const config = join(dir, "gateway.yaml");
  await writeFile(
    config,
    `version: "1.0"
identity_providers:
  - name: corp
    type: hosted_idp
    issuer: https://idp.example.com/
    jwks_uri: https://idp.example.com/jwks
    api_identifiers: [https://gateway.example.com]
    client_id: \${SYNC_CLIENT_ID:}
    client_secret: \${SYNC_CLIENT_SECRET:}
`,
  );
  const logFile = join(dir, "gateway.log");
  gateway = await spawnGateway(config, { logFile, env: { SVC_ALLOW_ANONYMOUS: "false" } });
  await waitForReadiness(gateway);
  const warnings = (await readFile(logFile, "utf8"))
    .split("\n")
    .filter((line) => line.includes("group sync is off"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(warnings).toEqual([
    expect.objectContaining({
      level: "warn",
      provider: "corp",
      empty_fields: ["client_id", "client_secret"],
    }),
  ]);
}, 60_000);
