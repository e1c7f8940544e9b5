// A fixed-window counter written as a KvScript, the shape a rate limiter takes: the same step
// in Lua and in memory. ARGV[1] = window in ms. Returns the count in the current window.
import type { KvScript } from "../../src/kv/kv-store.ts";

export const fixedWindowCounter: KvScript<number> = {
  lua: `
local count = redis.call("INCR", KEYS[1])
if count == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return count`,
  memory: (store, [key], [windowMs]) => {
    if (key === undefined || windowMs === undefined) throw new Error("fixedWindowCounter: key and window");
    const count = Number(store.get(key) ?? "0") + 1;
    const ttl = store.pttl(key);
    store.set(key, String(count), ttl > 0 ? ttl : Number(windowMs));
    return count;
  },
};

/** A script that makes Redis answer with an error: a caller bug, not an outage. */
export const brokenScript: KvScript = {
  lua: `return redis.call("NO_SUCH_COMMAND")`,
  memory: () => {
    throw new Error("broken");
  },
};
