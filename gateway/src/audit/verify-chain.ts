import type { ChainedAuditEvent } from "./audit-event.ts";
import { GENESIS_HASH } from "./audit-event.ts";
import { hashOf } from "./hash-chain.ts";

export interface ChainProblem {
  /** 1-based line in the file. */
  line: number;
  message: string;
}

export interface ChainReport {
  events: number;
  instances: number;
  problems: ChainProblem[];
}

/**
 * Checks JSON-lines audit output: every event's hash, and per instance an unbroken sequence whose prev_hash
 * links to the event before. An edited event fails its hash; a deleted, inserted or reordered one breaks the
 * sequence or the link. By default a chain must start at seq 0; `allowPartial` accepts a file that starts
 * mid-chain (after log rotation), checking from its first event on.
 */
export function verifyChain(text: string, options: { allowPartial?: boolean } = {}): ChainReport {
  const problems: ChainProblem[] = [];
  const last = new Map<string, { seq: number; hash: string }>();
  let events = 0;
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let event: ChainedAuditEvent;
    try {
      event = JSON.parse(raw) as ChainedAuditEvent;
    } catch {
      problems.push({ line, message: "not a JSON object" });
      return;
    }
    if (
      typeof event !== "object" ||
      event === null ||
      typeof event.instance !== "string" ||
      typeof event.seq !== "number"
    ) {
      problems.push({ line, message: "not an audit event (no instance or seq)" });
      return;
    }
    events += 1;
    const { hash, ...unsigned } = event;
    if (hashOf(unsigned) !== hash)
      problems.push({ line, message: `seq ${event.seq}: hash does not match the content (edited)` });
    const previous = last.get(event.instance);
    if (previous === undefined) {
      if (!options.allowPartial && (event.seq !== 0 || event.prev_hash !== GENESIS_HASH)) {
        problems.push({
          line,
          message: `instance ${event.instance} starts at seq ${event.seq}, not 0 (events before it are missing)`,
        });
      }
    } else {
      if (event.seq !== previous.seq + 1) {
        problems.push({
          line,
          message: `seq ${event.seq} follows seq ${previous.seq} (events missing or out of order)`,
        });
      }
      if (event.prev_hash !== previous.hash) {
        problems.push({ line, message: `seq ${event.seq}: prev_hash does not link to the event before` });
      }
    }
    last.set(event.instance, { seq: event.seq, hash });
  });
  return { events, instances: last.size, problems };
}
