import type { PathSegment } from "./problems.ts";
import { asRecord, type RuleProblem } from "./rules.ts";
import { localServersPolicySchema } from "./schema.ts";

// Settings the configuration can express for features this gateway version does not implement. A
// security gateway that accepted, say, a control plane and never contacted it would leave a platform team believing
// its policies apply, so a setting that turns such a feature on is refused, naming the field. Each check
// reads the effective value (the schema's default when the field is absent) of whatever parsed, so a file with
// other problems still gets these reported in the same run. Remove a check in the change that builds its feature.

/** The wording every refusal shares, so users, tests and the operator's status can recognise it. */
export const NOT_SUPPORTED_YET = "is not supported yet by this gateway version";

export function checkNotBuilt(raw: unknown): RuleProblem[] {
  const root = asRecord(raw);
  const problems: RuleProblem[] = [];
  /** `<feature> is not supported yet by this gateway version: <what would happen>; <what to do instead>` */
  const refuse = (path: PathSegment[], feature: string, consequence: string, instead: string) =>
    problems.push({ path, message: `${feature} ${NOT_SUPPORTED_YET}: ${consequence}; ${instead}` });

  if (root.control_plane !== undefined) {
    refuse(
      ["control_plane"],
      "a control plane (distributed mode)",
      "the gateway would never contact it or apply its policies",
      "remove control_plane and keep servers and policies in the configuration file",
    );
  }

  const policy = asRecord(root.gateway_policy);
  if (effective(localServersPolicySchema.shape.enabled, asRecord(policy.local_servers).enabled) === true) {
    refuse(
      ["gateway_policy", "local_servers", "enabled"],
      "the local servers policy",
      "it would block or admit nothing",
      "set it to false",
    );
  }

  return problems;
}

/** The value the gateway would use: the field's schema default when absent; undefined when it does not parse. */
function effective(
  field: { safeParse(value: unknown): { success: boolean; data?: unknown } },
  value: unknown,
): unknown {
  const parsed = field.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
