import { join } from "node:path";
import { repoRoot } from "./paths.ts";
import { type ListeningProcess, spawnListening } from "./spawn-listening.ts";

/** `svc-gateway start` as its own process, as in the pod, on a free loopback port (or `port`, when its URL must be known first). */
export function startGatewayProcess(
  configFile: string,
  env: Record<string, string> = {},
  port = 0,
): Promise<ListeningProcess> {
  return spawnListening(
    [
      join(repoRoot, "gateway", "bin", "svc-gateway.js"),
      "start",
      "--config",
      configFile,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
    ],
    // As in the pod: no SVC_ALLOW_ANONYMOUS, so every request needs a token from a configured identity provider.
    { SVC_CONFIG_POLL_SECONDS: "1", SVC_DRAIN_DELAY_SECONDS: "0", ...env },
  );
}
