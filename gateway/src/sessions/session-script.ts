import type { KvScript } from "../kv/kv-store.ts";

/**
 * One atomic step on a user's MCP sessions for one server, in the KV store so every gateway replica agrees.
 *
 * KEYS[1] the session's binding key (it exists while the session belongs to the owner whose hash it names),
 * KEYS[2] the owner's session list for this server (JSON object: session hash → expiry ms), under the same hash tag.
 * ARGV[1] session hash, ARGV[2] now (ms), ARGV[3] idle TTL (ms), ARGV[4] most sessions per owner and server,
 * ARGV[5] `bind` (a new session from the upstream) or `touch` (a request presenting the session).
 *
 * Returns 1 when the session is (still) the owner's, its idle time restarted; 0 for `touch` when the owner has no
 * such session (unknown, expired, ended or someone else's: the key is per owner, so a foreign id simply is not
 * there); -1 for `bind` when the owner already has the most sessions allowed.
 * The list is pruned of expired sessions on every step, so it never holds more than the cap.
 */
export const sessionStep: KvScript<number> = {
  lua: `
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
if ARGV[5] == "touch" and redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
local raw = redis.call("GET", KEYS[2])
local sessions = {}
if raw then sessions = cjson.decode(raw) end
local kept = {}
local count = 0
for id, expires in pairs(sessions) do
  if tonumber(expires) > now then
    kept[id] = expires
    count = count + 1
  end
end
if kept[ARGV[1]] == nil and count >= max then return -1 end
kept[ARGV[1]] = now + ttl
redis.call("SET", KEYS[2], cjson.encode(kept), "PX", ttl)
redis.call("SET", KEYS[1], "1", "PX", ttl)
return 1`,
  memory: (store, [binding, list], [session, nowText, ttlText, maxText, mode]) => {
    if (binding === undefined || list === undefined || session === undefined) {
      throw new Error("sessionStep needs two keys and a session");
    }
    const now = Number(nowText);
    const ttl = Number(ttlText);
    const max = Number(maxText);
    if (mode === "touch" && store.get(binding) === null) return 0;
    const sessions = JSON.parse(store.get(list) ?? "{}") as Record<string, number>;
    const kept: Record<string, number> = {};
    let count = 0;
    for (const [id, expires] of Object.entries(sessions)) {
      if (expires > now) {
        kept[id] = expires;
        count++;
      }
    }
    if (kept[session] === undefined && count >= max) return -1;
    kept[session] = now + ttl;
    store.set(list, JSON.stringify(kept), ttl);
    store.set(binding, "1", ttl);
    return 1;
  },
};

/**
 * Ends a session: removes its binding and its entry in the owner's list.
 * KEYS[1] binding, KEYS[2] owner's list; ARGV[1] session hash. Returns 1 when the session was the owner's, else 0.
 */
export const sessionEnd: KvScript<number> = {
  lua: `
local existed = redis.call("DEL", KEYS[1])
local raw = redis.call("GET", KEYS[2])
if raw then
  local sessions = cjson.decode(raw)
  if sessions[ARGV[1]] ~= nil then
    sessions[ARGV[1]] = nil
    local ttl = redis.call("PTTL", KEYS[2])
    if next(sessions) == nil then
      redis.call("DEL", KEYS[2])
    elseif ttl > 0 then
      redis.call("SET", KEYS[2], cjson.encode(sessions), "PX", ttl)
    end
  end
end
return existed`,
  memory: (store, [binding, list], [session]) => {
    if (binding === undefined || list === undefined || session === undefined) {
      throw new Error("sessionEnd needs two keys and a session");
    }
    const existed = store.get(binding) === null ? 0 : 1;
    store.delete(binding);
    const raw = store.get(list);
    if (raw !== null) {
      const sessions = JSON.parse(raw) as Record<string, number>;
      if (sessions[session] !== undefined) {
        delete sessions[session];
        const ttl = store.pttl(list);
        if (Object.keys(sessions).length === 0) store.delete(list);
        else if (ttl > 0) store.set(list, JSON.stringify(sessions), ttl);
      }
    }
    return existed;
  },
};
