import type { ScrubbingPolicy } from "../config/schema.ts";

// The scrubbing policy of one server is the union of its layers: the organization's (distributed mode), the
// gateway's (`gateway_policy.scrubbing`) and the server's (`servers[].security`), in that order of precedence,
// lowest first. Union means: scrubbing is on when any layer turns it on; every layer's fields, rules and
// recognizers apply; for a recognizer listed by several layers `enabled: true` wins over `false`, and the
// `replacement` of the highest layer that sets one wins.

export interface LayeredCustomRule {
  pattern: string;
  method: "mask" | "remove" | "hash" | "replace";
  replacement: string | undefined;
  /** Where the rule was written, e.g. `servers[0].security.custom_rules[1]`, for problems. */
  origin: string;
}

export interface MergedRecognizerSetting {
  enabled: boolean;
  replacement: string | undefined;
  origin: string;
}

export interface MergedScrubbingPolicy {
  enabled: boolean;
  /** Lower-cased: field names match whatever their case. */
  sensitiveFields: ReadonlySet<string>;
  whitelistFields: ReadonlySet<string>;
  /** Every layer's rules in layer order; a rule repeated verbatim by a later layer is kept once. */
  customRules: readonly LayeredCustomRule[];
  /** Only the entity types some layer lists; the others keep their default (config/pii-entities.ts). */
  recognizers: ReadonlyMap<string, MergedRecognizerSetting>;
}

export function mergeScrubbingLayers(
  layers: readonly ScrubbingPolicy[],
  layerPaths: readonly string[] = [],
): MergedScrubbingPolicy {
  let enabled = false;
  const sensitiveFields = new Set<string>();
  const whitelistFields = new Set<string>();
  const customRules: LayeredCustomRule[] = [];
  const seenRules = new Set<string>();
  const recognizers = new Map<string, MergedRecognizerSetting>();
  layers.forEach((layer, layerIndex) => {
    const path = layerPaths[layerIndex] ?? `layers[${layerIndex}]`;
    enabled ||= layer.enabled;
    for (const field of layer.sensitive_fields) sensitiveFields.add(field.toLowerCase());
    for (const field of layer.whitelist_fields) whitelistFields.add(field.toLowerCase());
    layer.custom_rules.forEach((rule, ruleIndex) => {
      const key = JSON.stringify([rule.pattern, rule.method, rule.replacement]);
      if (seenRules.has(key)) return;
      seenRules.add(key);
      customRules.push({
        pattern: rule.pattern,
        method: rule.method,
        replacement: rule.replacement,
        origin: `${path}.custom_rules[${ruleIndex}]`,
      });
    });
    layer.recognizers.forEach((setting, settingIndex) => {
      const earlier = recognizers.get(setting.entity_type);
      recognizers.set(setting.entity_type, {
        enabled: (earlier?.enabled ?? false) || setting.enabled,
        replacement: setting.replacement ?? earlier?.replacement,
        origin: earlier?.origin ?? `${path}.recognizers[${settingIndex}]`,
      });
    });
  });
  return { enabled, sensitiveFields, whitelistFields, customRules, recognizers };
}
