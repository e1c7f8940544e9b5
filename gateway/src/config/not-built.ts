import type { PathSegment } from "./problems.ts";
import { asList, asRecord, type RuleProblem } from "./rules.ts";
import { serverSchema } from "./schema.ts";

// Settings the configuration can express for features this gateway version does not implement. A
// security gateway that accepted, say, upstream OAuth settings and never used them would leave a platform team
// believing they apply, so a setting that turns such a feature on is refused, naming the field. Each check
// reads the effective value (the schema's default when the field is absent) of whatever parsed, so a file with
// other problems still gets these reported in the same run. Remove a check in the change that builds its feature.

/** The wording every refusal shares, so users, tests and the operator's status can recognise it. */
export const NOT_SUPPORTED_YET = "is not supported yet by this gateway version";

/** Fields that configure the gateway as an OAuth client of its upstream (upstream_auth_type oauth). */
const UPSTREAM_OAUTH_FIELDS = [
  "preregistered_client_id",
  "preregistered_client_secret",
  "auth_server_url",
  "scopes_override",
] as const;

export function checkNotBuilt(raw: unknown): RuleProblem[] {
  const root = asRecord(raw);
  const problems: RuleProblem[] = [];
  /** `<feature> is not supported yet by this gateway version: <what would happen>; <what to do instead>` */
  const refuse = (path: PathSegment[], feature: string, consequence: string, instead: string) =>
    problems.push({ path, message: `${feature} ${NOT_SUPPORTED_YET}: ${consequence}; ${instead}` });

  asList(root.servers).forEach((server, index) => {
    const fields = asRecord(server);
    const at = (...path: PathSegment[]) => ["servers", index, ...path];
    if (effective(serverSchema.shape.upstream_auth_type, fields.upstream_auth_type) === "oauth") {
      refuse(
        at("upstream_auth_type"),
        `upstream OAuth (oauth${fields.upstream_auth_type === undefined ? ", the default" : ""})`,
        "the gateway has no way to get an upstream token and would send none",
        "set it to none or api_key until upstream OAuth lands",
      );
    }
    for (const field of UPSTREAM_OAUTH_FIELDS) {
      if (fields[field] !== undefined) {
        refuse(at(field), "upstream OAuth, which this field configures,", "it would be ignored", "remove it");
      }
    }
  });

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
