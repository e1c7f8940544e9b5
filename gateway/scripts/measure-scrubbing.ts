// How long the PII scrubbing engine takes for one tool call: a 1 KB `tools/call` argument object plus a 4 KB
// tool result (text content holding JSON, as tools return it), every recognizer on, a few custom rules and
// sensitive fields. Not a test: prints p50/p90/p99 of the pair, the figure docs/scrubbing.md reports.
//
//   node gateway/scripts/measure-scrubbing.ts [--iterations N]

import { parseArgs } from "node:util";
import { compileScrubbing, ENTITY_TYPES } from "../src/pii/index.ts";

const { values: args } = parseArgs({ options: { iterations: { type: "string", default: "5000" } } });
const iterations = Number(args.iterations);

const compiled = compileScrubbing(
  [
    {
      enabled: true,
      sensitive_fields: ["password", "api_key", "authorization"],
      whitelist_fields: ["request_id"],
      custom_rules: [
        { pattern: "EMP-[0-9]{6}", method: "mask", replacement: undefined },
        { pattern: "(?i)secret[-_][a-z0-9]{8,}", method: "hash", replacement: undefined },
        { pattern: "ACME[0-9]{4}", method: "replace", replacement: "<ACCOUNT>" },
      ],
      recognizers: ENTITY_TYPES.map((entity_type) => ({
        entity_type,
        enabled: true,
        replacement: undefined,
      })),
    },
  ],
  { hashKey: "measure-key-measure-key-measure-key-0123" },
);
if ("problems" in compiled) throw new Error(JSON.stringify(compiled.problems));

const prose =
  "The quarterly report covers shipping volumes, warehouse utilisation and the carrier scorecard. " +
  "Volumes rose 12% on the previous quarter, mostly in the northern region; returns stayed flat at 3.1%. ";

/** A `tools/call` arguments object of about `bytes` bytes. */
function argumentsOf(bytes: number) {
  const value = {
    query: "Find the customer who wrote from jane.roe@example.com about order ORD-2024-118833",
    filters: { region: "north", since: "2024-01-01", limit: 50, include_archived: false },
    request_id: "5f0c3e2a-8d4b-4c1e-9a77-2b1f0e6d9c11",
    password: "hunter2",
    notes: "",
  };
  value.notes = prose.repeat(Math.ceil(bytes / prose.length)).slice(0, bytes - JSON.stringify(value).length);
  return value;
}

/** A `tools/call` result of about `bytes` bytes: one text content item that holds JSON records. */
function resultOf(bytes: number) {
  const records: unknown[] = [];
  const result = { content: [{ type: "text", text: "" }], isError: false };
  for (let i = 0; JSON.stringify(result).length < bytes; i++) {
    records.push({
      id: 1000 + i,
      name: `Customer ${i}`,
      email: `customer${i}@example.org`,
      phone: `+1 415 555 ${String(1000 + i).slice(-4)}`,
      last_login_ip: `203.0.113.${i % 250}`,
      card: i % 5 === 0 ? "4111 1111 1111 1111" : null,
      comment: prose.slice(0, 120),
      api_key: "sk_live_0123456789",
    });
    result.content[0] = { type: "text", text: JSON.stringify({ records }, null, 2) };
  }
  return result;
}

const argument = argumentsOf(1024);
const result = resultOf(4096);
console.log(
  `argument ${JSON.stringify(argument).length} bytes, result ${JSON.stringify(result).length} bytes, ` +
    `recognizers: ${compiled.entityTypes.length}`,
);

const once = () => {
  const a = compiled.scrubValue(argument);
  const r = compiled.scrubValue(result);
  if (!a.changed || !r.changed) throw new Error("nothing scrubbed: the measurement is wrong");
};
for (let i = 0; i < 500; i++) once(); // warm-up: let V8 optimise
const samples: number[] = [];
for (let i = 0; i < iterations; i++) {
  const start = process.hrtime.bigint();
  once();
  samples.push(Number(process.hrtime.bigint() - start) / 1e6);
}
samples.sort((a, b) => a - b);
const at = (q: number) =>
  (samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0).toFixed(3);
console.log(
  `argument + result, ${iterations} runs: p50 ${at(0.5)} ms  p90 ${at(0.9)} ms  p99 ${at(0.99)} ms`,
);
