// `svc-gateway start` in its own process on a config written to a temp dir, as an operator runs it: for the tests of
// what reaches a client through the gateway, so nothing of the test process (its module instances, its event loop)
// stands between the client and the gateway.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway } from "../../conformance/spawn-gateway.ts";

export interface SpawnedTestGateway {
  url: string;
  close(): Promise<void>;
}

export async function spawnGatewayWithConfig(
  config: string,
  env: Record<string, string> = {},
): Promise<SpawnedTestGateway> {
  const dir = await mkdtemp(join(tmpdir(), "svc-spawned-"));
  const configFile = join(dir, "gateway.yaml");
  await writeFile(configFile, config);
  const gateway = await spawnGateway(configFile, {
    // Info logs: spawnGateway waits for the "listening" line. They go to a file beside the config.
    env: { SVC_CONFIG_POLL_SECONDS: "0", SVC_AUDIT_FILE: "/dev/null", ...env },
    timeoutMs: 60_000,
  });
  return {
    url: gateway.url,
    close: async () => {
      await gateway.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
