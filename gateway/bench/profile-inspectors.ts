// The inspected path's own work, in process, without HTTP: the bench's pii workload (a 1 KB tools/call argument with
// personal data, its 4 KB result) through the request and response inspector chains of a server with scrubbing (every
// recognizer) and the firewall (block, built-in detector), as the pipeline runs them: the request messages inspected
// and serialised again, the answer's bytes parsed, inspected and serialised again. Prints µs per request for
// scrubbing alone, the firewall alone and both; with PROFILE_DIR set it writes a .cpuprofile of the "both" loop and
// prints its summary (cpu-profile-summary.ts). Usage: node gateway/bench/profile-inspectors.ts [iterations]

import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { firewallPolicySchema } from "../src/config/firewall-schema.ts";
import { scrubbingPolicySchema } from "../src/config/schema.ts";
import { compileFirewall, DetectorSet } from "../src/firewall/detectors.ts";
import { mergeFirewallLayers } from "../src/firewall/policy.ts";
import { textInspectors } from "../src/inspect/chain.ts";
import { firewallInspectors } from "../src/inspect/firewall-inspector.ts";
import { inspectRequest, type MessageInspector, responseInspection } from "../src/inspect/inspector.ts";
import { newRequestRecord } from "../src/inspect/request-record.ts";
import { scrubInspectors } from "../src/inspect/scrub-inspector.ts";
import { type CompiledScrubbing, compileScrubbing, ENTITY_TYPES } from "../src/pii/index.ts";
import type { JsonRpcMessage } from "../src/sse/json-rpc.ts";
import { summarise } from "./cpu-profile-summary.ts";
import { piiText } from "./pii-workload.ts";

const iterations = Number(process.argv[2] ?? 2000);

const compiled = compileScrubbing([
  scrubbingPolicySchema.parse({
    enabled: true,
    recognizers: ENTITY_TYPES.map((entity_type) => ({ entity_type })),
  }),
]);
if (!("enabled" in compiled) || !compiled.enabled)
  throw new Error(`scrubbing did not compile: ${JSON.stringify(compiled)}`);
const scrubbing: CompiledScrubbing = compiled;
const merged = mergeFirewallLayers(
  firewallPolicySchema.parse({ enabled: true, mode: "block" }),
  undefined,
  [],
);
if (!("settings" in merged) || merged.settings === undefined) throw new Error("firewall did not compile");
const firewall = compileFirewall(merged.settings, new DetectorSet());

const ignore = () => {};
const scrub = scrubInspectors(scrubbing, ignore);
const wall = firewallInspectors(firewall, ignore);
const chains: Record<string, { request: MessageInspector[]; response: MessageInspector[] }> = {
  scrubbing: { request: [scrub.request], response: [scrub.response] },
  firewall: { request: [wall.request], response: [wall.response] },
  // In the request path's order (inspect/chain.ts).
  both: textInspectors({ scrubbing, firewall }, { onScrubbed: ignore, onFirewallFinding: ignore }),
};

const requestBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "report", arguments: { text: piiText } },
});

/** One request's inspection: parse and inspect the request, serialise it again when changed, then the answer. */
async function once(chain: { request: MessageInspector[]; response: MessageInspector[] }): Promise<void> {
  const record = newRequestRecord("req-1", "POST", "127.0.0.1");
  record.server = "bench-inspected";
  const messages = [JSON.parse(requestBody) as JsonRpcMessage];
  record.messages = messages;
  const inspected = await inspectRequest(chain.request, record, messages);
  const forwarded = inspected.changed ? JSON.stringify(inspected.messages[0]) : requestBody;
  const argument = (JSON.parse(forwarded) as { params: { arguments: { text: string } } }).params.arguments
    .text;
  const answer = Buffer.from(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: `${argument}\n${argument}\n${argument}\n${argument}` }] },
    }),
  );
  const inspection = responseInspection(chain.response, record);
  await inspection?.json(answer);
}

async function timed(name: string): Promise<number> {
  const chain = chains[name];
  if (chain === undefined) throw new Error(name);
  for (let i = 0; i < 300; i++) await once(chain);
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await once(chain);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

for (let round = 0; round < 3; round++) {
  const line: string[] = [];
  for (const name of ["scrubbing", "firewall", "both"])
    line.push(`${name} ${(await timed(name)).toFixed(1)} µs`);
  console.log(`round ${round + 1}: ${line.join("  ")} (CPU per request, ${iterations} requests)`);
}

const dir = process.env.PROFILE_DIR;
if (dir !== undefined) {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const started = Date.now();
  for (let i = 0; i < iterations * 3; i++) await once(chains.both as (typeof chains)["both"]);
  const seconds = (Date.now() - started) / 1000;
  const { profile } = await session.post("Profiler.stop");
  const file = join(dir, "inspectors.cpuprofile");
  await writeFile(file, JSON.stringify(profile));
  console.log(`profile: ${file}\n`);
  console.log(summarise(profile as never, Number(process.env.PROFILE_TOP ?? 40), seconds));
}
