// The detectors of one configuration, built once and shared by every server that lists them: a webhook detector holds
// a connection pool, so two servers naming the same gateway-level webhook use one. When a reload replaces the
// configuration, the old set is closed (in-flight calls finish first).
import type { DetectorConfig } from "../config/firewall-schema.ts";
import { loadBuiltinDetector } from "./builtin-detector.ts";
import type { Detector } from "./detector.ts";
import { detectorName } from "./policy.ts";
import { webhookDetector } from "./webhook-detector.ts";

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
        name: config.name,
        url: config.url,
        timeoutMs: config.timeout_ms,
        headers: config.headers,
      });
    case "onnx":
      throw new Error("onnx detectors are refused by the configuration check before they are built");
  }
}
