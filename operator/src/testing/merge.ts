// Merge helpers for the fake API server: RFC 7386 JSON merge patch, and the subset of server-side-apply
// merging the operator relies on (maps merge, lists of objects keyed by `name` merge by that key, other
// lists are atomic; fields a manager applied before and omits now are removed).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** RFC 7386: null deletes a key, objects merge recursively, everything else replaces. */
export function jsonMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = jsonMergePatch(result[key], value);
  }
  return result;
}

function isKeyedList(list: Json[]): list is JsonObject[] {
  return list.every((item) => isObject(item) && typeof item.name === "string");
}

/** Removes from `target` what `previous` (a manager's last applied config) set and `next` no longer sets. */
function prune(
  target: Json | undefined,
  previous: Json | undefined,
  next: Json | undefined,
): Json | undefined {
  if (isObject(target) && isObject(previous)) {
    const result: JsonObject = { ...target };
    for (const key of Object.keys(previous)) {
      const nextValue = isObject(next) ? next[key] : undefined;
      if (nextValue === undefined) delete result[key];
      else {
        const pruned = prune(result[key], previous[key], nextValue);
        if (pruned === undefined) delete result[key];
        else result[key] = pruned;
      }
    }
    return result;
  }
  if (Array.isArray(target) && Array.isArray(previous) && isKeyedList(target) && isKeyedList(previous)) {
    const nextList = Array.isArray(next) && isKeyedList(next) ? next : [];
    const result: Json[] = [];
    for (const item of target) {
      const before = previous.find((p) => p.name === item.name);
      const after = nextList.find((n) => n.name === item.name);
      if (before && !after) continue;
      result.push(before && after ? (prune(item, before, after) ?? item) : item);
    }
    return result;
  }
  return target;
}

function applyMerge(target: Json | undefined, patch: Json): Json {
  if (isObject(patch)) {
    const result: JsonObject = isObject(target) ? { ...target } : {};
    for (const [key, value] of Object.entries(patch)) result[key] = applyMerge(result[key], value);
    return result;
  }
  if (Array.isArray(patch) && Array.isArray(target) && isKeyedList(patch) && isKeyedList(target)) {
    const result: Json[] = target.map((item) => {
      const incoming = patch.find((p) => p.name === item.name);
      return incoming ? applyMerge(item, incoming) : item;
    });
    for (const item of patch) if (!target.some((t) => t.name === item.name)) result.push(item);
    return result;
  }
  return patch;
}

/** Server-side apply for one field manager: drop what it stopped applying, then merge what it applies now. */
export function serverSideApply(
  live: JsonObject,
  previousApplied: JsonObject | undefined,
  applied: JsonObject,
) {
  const pruned = previousApplied ? prune(live, previousApplied, applied) : live;
  return applyMerge(pruned, applied) as JsonObject;
}

/** The fields an apply configuration sets, as `.a.b[name="x"].c` paths with their values (canonical JSON):
 *  what server-side apply records as that manager's fields. Objects are walked, lists keyed by `name` are
 *  walked per item, anything else (scalars, atomic lists) is one field. The object's identity (apiVersion,
 *  kind, metadata.name, metadata.namespace) belongs to no manager. */
export function appliedFields(applied: JsonObject): Map<string, string> {
  const fields = new Map<string, string>();
  const walk = (value: Json, path: string): void => {
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) walk(child, `${path}.${key}`);
      return;
    }
    if (Array.isArray(value) && value.length > 0 && isKeyedList(value)) {
      for (const item of value) {
        const { name, ...rest } = item;
        const itemPath = `${path}[name=${JSON.stringify(name)}]`;
        if (Object.keys(rest).length === 0) fields.set(itemPath, JSON.stringify({}));
        else walk(rest, itemPath);
      }
      return;
    }
    fields.set(path, JSON.stringify(value));
  };
  const { apiVersion: _a, kind: _k, metadata, ...rest } = applied;
  if (isObject(metadata)) {
    const { name: _n, namespace: _ns, ...ownedMetadata } = metadata;
    if (Object.keys(ownedMetadata).length > 0) walk(ownedMetadata, ".metadata");
  }
  if (Object.keys(rest).length > 0) walk(rest, "");
  return fields;
}

/** `applied` without the fields at `paths` (paths as appliedFields names them): what a manager still owns
 *  after another one forced those fields away from it. */
export function withoutFields(applied: JsonObject, paths: Set<string>): JsonObject {
  const strip = (value: Json, path: string): Json | undefined => {
    if (paths.has(path)) return undefined;
    if (isObject(value)) {
      const result: JsonObject = {};
      for (const [key, child] of Object.entries(value)) {
        const kept = strip(child, `${path}.${key}`);
        if (kept !== undefined) result[key] = kept;
      }
      return result;
    }
    if (Array.isArray(value) && isKeyedList(value)) {
      return value.flatMap((item) => {
        const itemPath = `${path}[name=${JSON.stringify(item.name)}]`;
        if (paths.has(itemPath)) return [];
        const kept = strip(item, itemPath) as JsonObject;
        return [{ ...kept, name: item.name ?? null }];
      });
    }
    return value;
  };
  return (strip(applied, "") as JsonObject | undefined) ?? {};
}
