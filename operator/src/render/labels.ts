import { MANAGED_BY_LABEL, MANAGED_BY_VALUE, OWNER_KIND_LABEL, OWNER_NAME_LABEL } from "../api/names.ts";
import type { Resource } from "./resources.ts";

/** Labels on every object the operator renders: who manages it, and which resource it came from (the
 *  controller's informers select on these). */
export function renderedLabels(owner: Resource): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [OWNER_KIND_LABEL]: owner.kind,
    [OWNER_NAME_LABEL]: owner.metadata.name,
  };
}
