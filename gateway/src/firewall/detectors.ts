// The detectors of one configuration, built once and shared by every server that lists them: a webhook detector holds
// a connection pool, so two servers naming the same gateway-level webhook use one. When a reload replaces the
// configuration, the old set is closed (in-flight calls finish first).
import { type DetectorConfig, WEBHOOK_TIMEOUT_MS } from "../config/firewall-schema.ts";
import { loadBuiltinDetector } from "./builtin-detector.ts";
import type { Detector } from "./detector.ts";
import { detectorName, type FirewallSettings } from "./policy.ts";
import { webhookDetector } from "./webhook-detector.ts";

/** A detector as configured: what to do when it gives no answer. */
export interface FirewallDetector {
  readonly detector: Detector;
  readonly onError: "block" | "allow";
}

/** One server's firewall, ready to run: its merged settings and its detectors, in the configured order. */
export interface CompiledFirewall {
  readonly settings: FirewallSettings;
  readonly detectors: readonly FirewallDetector[];
}

export function compileFirewall(settings: FirewallSettings, detectors: DetectorSet): CompiledFirewall {
  return {
    settings,
    detectors: settings.detectors.map((config) => ({
      detector: detectors.get(config),
      // The built-in detector runs in process and always answers; on_error is for detectors that can fail.
      onError: config.on_error ?? "block",
    })),
  };
}

export class DetectorSet {
  readonly #byName = new Map<string, Detector>();

  /** The detector for a configuration entry, created on first use. */
  get(config: DetectorConfig): Detector {
    const name = detectorName(config);
    let detector = this.#byName.get(name);
    if (detector === undefined) {
      detector = createDetector(config);
      this.#byName.set(name, detector);
    }
    return detector;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#byName.values()].map((detector) => detector.close?.()));
    this.#byName.clear();
  }
}

function createDetector(config: DetectorConfig): Detector {
  switch (config.type) {
    case "builtin":
      return loadBuiltinDetector();
    case "webhook":
      return webhookDetector({
        name: config.name ?? "",
        url: config.url ?? "",
        timeoutMs: config.timeout_ms ?? WEBHOOK_TIMEOUT_MS.fallback,
        headers: config.headers ?? {},
      });
    case "onnx":
      throw new Error("onnx detectors are refused by the configuration check before they are built");
  }
}
