// The detectors of one configuration, built once and shared by every server that lists them: a webhook detector holds
// a connection pool and a model file a worker thread, so two servers naming the same gateway-level detector use one.
// A model file loads in the background from the moment the configuration is built; `ready()` waits for every load,
// and a model that does not load refuses the configuration at start or reload (the last good one keeps serving),
// naming the detector. When a reload replaces the configuration, the old set is closed (in-flight calls finish first).
import { type DetectorConfig, WEBHOOK_TIMEOUT_MS } from "../config/firewall-schema.ts";
import { ConfigError, type ConfigProblem } from "../config/index.ts";
import { loadBuiltinDetector } from "./builtin-detector.ts";
import { type Detector, DetectorUnavailableError } from "./detector.ts";
import { loadOnnxDetector } from "./onnx-detector.ts";
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

export function compileFirewall(
  settings: FirewallSettings,
  detectors: DetectorSet,
  path = "gateway_policy.firewall",
): CompiledFirewall {
  return {
    settings,
    detectors: settings.detectors.map((config) => ({
      detector: detectors.get(config, `${path}.detectors`),
      // The built-in detector runs in process and always answers; on_error is for detectors that can fail.
      onError: config.on_error ?? "block",
    })),
  };
}

export class DetectorSet {
  readonly #byName = new Map<string, Detector>();
  /** Model files still loading, with where in the configuration each was named. */
  readonly #loading: Array<{ path: string; load: Promise<unknown> }> = [];

  /** The detector for a configuration entry, created on first use; `path` locates the entry in problems. */
  get(config: DetectorConfig, path = "gateway_policy.firewall.detectors"): Detector {
    const name = detectorName(config);
    let detector = this.#byName.get(name);
    if (detector === undefined) {
      detector = this.#create(config, path);
      this.#byName.set(name, detector);
    }
    return detector;
  }

  /** Resolves when every model file has loaded; throws ConfigError naming each that did not. */
  async ready(source: string): Promise<void> {
    const problems: ConfigProblem[] = [];
    for (const { path, load } of this.#loading) {
      try {
        await load;
      } catch (error) {
        problems.push({ path, message: (error as Error).message });
      }
    }
    if (problems.length > 0) throw new ConfigError(problems, source);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#byName.values()].map((detector) => detector.close?.()));
    this.#byName.clear();
  }

  #create(config: DetectorConfig, path: string): Detector {
    if (config.type !== "onnx") return createDetector(config);
    const name = detectorName(config);
    const load = loadOnnxDetector({ name: config.name ?? "", path: config.path ?? "" });
    // Awaited by ready(); a rejection seen there (or by score) is not an unhandled one.
    load.catch(() => {});
    this.#loading.push({ path: `${path}.path`, load });
    return {
      name,
      score: (text, direction) =>
        load.then(
          (detector) => detector.score(text, direction),
          (error: Error) => {
            throw new DetectorUnavailableError(name, `the model did not load: ${error.message}`);
          },
        ),
      close: () => load.then((detector) => detector.close?.()).catch(() => {}),
    };
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
    default:
      throw new Error(`no detector of type ${config.type}`);
  }
}
