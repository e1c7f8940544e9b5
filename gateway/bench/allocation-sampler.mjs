// Preloaded into the gateway by profile-allocations.ts (NODE_OPTIONS=--import): V8's sampling heap profiler,
// started on SIGUSR2 (after the warm-up) and written to $ALLOCATION_PROFILE_DIR when the process exits. Objects the
// scavenger and the full GC collected stay in the samples, so the profile counts every byte allocated, not what
// happened to survive: allocation per request is what drives both scavenges (CPU) and the heap V8 reserves (RSS).
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

const session = new Session();
session.connect();
session.post("HeapProfiler.enable");
let sampling = false;
process.on("SIGUSR2", () => {
  if (sampling) return;
  sampling = true;
  session.post("HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
});
process.on("exit", () => {
  if (!sampling) return;
  // The same-thread session answers synchronously, so the profile is written before the process ends.
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error !== null) return;
    const dir = process.env.ALLOCATION_PROFILE_DIR ?? ".";
    writeFileSync(join(dir, `allocations-${process.pid}.heapprofile`), JSON.stringify(result.profile));
  });
});
