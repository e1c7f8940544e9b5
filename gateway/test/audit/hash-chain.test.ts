import { hash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { type AuditEvent, completeEvent } from "../../src/audit/audit-event.ts";
import { eventJson } from "../../src/audit/event-json.ts";
import { canonicalJson, HashChain, hashOf, LINKED_FIELDS } from "../../src/audit/hash-chain.ts";

const canonicalHash = (event: unknown) => hash("sha256", canonicalJson(event), "hex");

function randomText(length: number): string {
  // ASCII, quotes and escapes, non-ASCII and astral characters, lone surrogates: all JSON.stringify must escape alike.
  const pool = ["a", "Z", '"', "\\", "\n", "\u0001", "é", "漢", "😀", "\ud800", "\udfff", " ", "/"];
  return Array.from({ length }, () => pool[Math.floor(Math.random() * pool.length)]).join("");
}

function randomEvent(seq: number): AuditEvent {
  const maybe = <T>(value: T): T | undefined => (Math.random() < 0.5 ? value : undefined);
  return completeEvent(
    {
      kind: Math.random() < 0.5 ? "call_completed" : "rbac_decision",
      request_id: maybe(randomText(8)),
      source: maybe(randomText(5)),
      server: maybe(randomText(6)),
      subject: maybe(randomText(12)),
      groups: Array.from({ length: seq % 4 }, () => randomText(4)),
      decision: maybe("allow"),
      reason: maybe(randomText(20)),
      status: maybe(Math.floor(Math.random() * 600)),
      latency_ms: maybe(Math.random() * 100),
      count: maybe(seq % 3 === 0 ? Number.NaN : -0),
    },
    randomText(6),
  );
}

describe("the hash chain", () => {
  test("LINKED_FIELDS are exactly the fields of a linked event but its hash, sorted", () => {
    const { hash: _hash, ...linked } = new HashChain("gw-1").link(
      completeEvent({ kind: "call_completed" }, "gw"),
    );
    expect([...LINKED_FIELDS]).toEqual(Object.keys(linked).sort());
  });

  test("every event's hash is the SHA-256 of its canonical JSON (sorted keys at every level)", () => {
    const chain = new HashChain("gw-1");
    for (let seq = 0; seq < 2000; seq++) {
      const { hash: linkedHash, ...unsigned } = chain.link(randomEvent(seq));
      expect(linkedHash).toBe(canonicalHash(unsigned));
    }
  });

  test("the line every sink writes for a linked event is what JSON.stringify writes for it (made while hashing)", () => {
    const chain = new HashChain("gw-1");
    for (let seq = 0; seq < 500; seq++) {
      const linked = chain.link(randomEvent(seq));
      const line = eventJson(linked);
      expect(line).toBe(JSON.stringify(linked));
      const { hash: linkedHash, ...unsigned } = JSON.parse(line) as typeof linked;
      expect(linkedHash).toBe(canonicalHash(unsigned));
    }
    // An event the fast path does not take (a field outside the linked set) gets the same line the same way.
    const odd = chain.link({ ...randomEvent(1), extra: { b: 1, a: 2 } } as unknown as AuditEvent);
    expect(eventJson(odd)).toBe(JSON.stringify(odd));
  });

  test("events that are not plain linked events hash by canonicalJson too", () => {
    const { hash: _hash, ...base } = new HashChain("gw-1").link(
      completeEvent({ kind: "call_completed" }, "gw"),
    );
    const odd: unknown[] = [
      { ...base, extra: "field" },
      { ...base, reason: undefined },
      { ...base, groups: ["a", undefined, "b"] },
      { ...base, groups: [{ z: 1, a: 2 }] },
      { ...base, reason: { z: 1, a: { y: 2, b: 3 } } },
      (({ count: _count, ...rest }) => rest)(base),
    ];
    for (const event of odd) {
      expect(hashOf(event as Parameters<typeof hashOf>[0])).toBe(canonicalHash(event));
    }
  });
});
