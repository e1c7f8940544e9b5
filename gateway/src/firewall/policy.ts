// One server's effective firewall settings: the gateway's layer (gateway_policy.firewall) with the server's
// (servers[].firewall) on top. The server layer may only tighten an enabled gateway firewall, so a setting that would
// loosen it is refused with a problem naming the field, never silently ignored: turning it off, monitor instead of
// block, a higher threshold, turning spotlighting off. Lists add up: the server's methods and detectors are inspected
// and run besides the gateway's, and its allow-lists (tool and field names only the server knows) join the gateway's,
// as scrubbing's whitelist_fields do. With the gateway's firewall off, a server that turns it on sets what it likes.
import type { DetectorConfig, FirewallPolicy, ServerFirewallPolicy } from "../config/firewall-schema.ts";
import type { PathSegment } from "../config/problems.ts";
import type { FirewallDirection } from "./detector.ts";

export type FirewallMode = "block" | "monitor";

export interface FirewallSettings {
  readonly mode: FirewallMode;
  /** Client methods whose arguments are inspected. */
  readonly requests: ReadonlySet<string>;
  /** Upstream answers (by the method they answer) and server requests whose content is inspected. */
  readonly responses: ReadonlySet<string>;
  readonly thresholds: Readonly<Record<FirewallDirection, number>>;
  readonly allowTools: ReadonlySet<string>;
  readonly allowFields: ReadonlySet<string>;
  readonly detectors: readonly DetectorConfig[];
  readonly maxTextChars: number;
  readonly spotlighting: boolean;
}

/** `webhook:lakera`, `builtin`: how a detector is named in audit, metrics and findings. */
export function detectorName(config: DetectorConfig): string {
  return config.type === "builtin" ? "builtin" : `${config.type}:${config.name ?? ""}`;
}

/**
 * The merged settings, `undefined` when neither layer turns the firewall on, or the problems of a server layer that
 * would loosen the gateway's. `serverPath` names the server's layer in problems (`servers`, 2,
 * `firewall`).
 */
export interface LayerProblem {
  path: PathSegment[];
  message: string;
}

export function mergeFirewallLayers(
  gateway: FirewallPolicy,
  server: ServerFirewallPolicy | undefined,
  serverPath: PathSegment[],
): { settings: FirewallSettings | undefined } | { problems: LayerProblem[] } {
  const problems: LayerProblem[] = [];
  const loosens = (field: string, what: string) =>
    problems.push({
      path: [...serverPath, field],
      message: `${what}: a server's firewall settings may only tighten gateway_policy.firewall, which is enabled`,
    });
  const s = server ?? {};
  const enabled = gateway.enabled || s.enabled === true;
  if (!enabled) return { settings: undefined };
  const strict = gateway.enabled;

  if (strict && s.enabled === false) loosens("enabled", "cannot turn the firewall off");
  if (strict && gateway.mode === "block" && s.mode === "monitor")
    loosens("mode", "cannot turn block into monitor");
  if (strict && s.request_threshold !== undefined && s.request_threshold > gateway.request_threshold) {
    loosens("request_threshold", `cannot raise the threshold above ${gateway.request_threshold}`);
  }
  if (strict && s.response_threshold !== undefined && s.response_threshold > gateway.response_threshold) {
    loosens("response_threshold", `cannot raise the threshold above ${gateway.response_threshold}`);
  }
  if (strict && gateway.spotlighting && s.spotlighting === false) {
    loosens("spotlighting", "cannot turn spotlighting off");
  }
  if (strict && s.max_text_chars !== undefined && s.max_text_chars > gateway.max_text_chars) {
    loosens("max_text_chars", `cannot raise it above ${gateway.max_text_chars}`);
  }

  const detectors = [...gateway.detectors];
  const names = new Set(detectors.map(detectorName));
  (s.detectors ?? []).forEach((detector, index) => {
    const name = detectorName(detector);
    if (names.has(name) && detector.type !== "builtin") {
      problems.push({
        path: [...serverPath, "detectors", index, "name"],
        message: `a detector named ${name} is already defined in gateway_policy.firewall.detectors`,
      });
    }
    if (!names.has(name)) detectors.push(detector);
    names.add(name);
  });
  if (detectors.length === 0) {
    problems.push({
      path: ["gateway_policy", "firewall", "detectors"],
      message: "must list at least one detector when the firewall is on",
    });
  }
  if (problems.length > 0) return { problems };

  const tighterOf = (a: number, b: number | undefined) =>
    b === undefined || !strict ? (b ?? a) : Math.min(a, b);
  return {
    settings: {
      mode: strict ? (s.mode === "block" ? "block" : gateway.mode) : (s.mode ?? gateway.mode),
      requests: new Set([...gateway.requests, ...(s.requests ?? [])]),
      responses: new Set([...gateway.responses, ...(s.responses ?? [])]),
      thresholds: {
        request: tighterOf(gateway.request_threshold, s.request_threshold),
        response: tighterOf(gateway.response_threshold, s.response_threshold),
      },
      allowTools: new Set([...gateway.allow_tools, ...(s.allow_tools ?? [])]),
      allowFields: new Set([...gateway.allow_fields, ...(s.allow_fields ?? [])]),
      detectors,
      maxTextChars: tighterOf(gateway.max_text_chars, s.max_text_chars),
      spotlighting: strict
        ? gateway.spotlighting || s.spotlighting === true
        : (s.spotlighting ?? gateway.spotlighting),
    },
  };
}
