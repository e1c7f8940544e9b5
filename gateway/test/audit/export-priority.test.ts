import { afterEach, describe, expect, test } from "vitest";
import { ExportPriority } from "../../src/audit/exporters/export-priority.ts";
import { ExportProcess } from "../../src/audit/exporters/export-process.ts";
import { searchIndexExporterSchema } from "../../src/config/schema.ts";
import { SearchIndexReceiver } from "./receivers/search-index-receiver.ts";
import { sinkStatus } from "./support/sink-status.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((each) => each.close()));
});

function setUp() {
  let now = 0;
  const changes: [boolean, string][] = [];
  const exports = new ExportProcess({ niceness: 0, idle: true });
  open.push(exports);
  const priority = new ExportPriority(exports, {
    behindForMs: 30_000,
    caughtUpEvents: 1_000,
    stalledAfterMs: 15_000,
    now: () => now,
    onChange: (idle, reason) => changes.push([idle, reason]),
  });
  return { exports, priority, changes, advance: (ms: number) => (now += ms) };
}

describe("export priority", () => {
  test("a burst that is absorbed within the limit leaves exporting on idle CPU", () => {
    const { priority, changes, advance } = setUp();
    priority.check([sinkStatus("search_index:es", "behind", 12_000)]);
    advance(29_000);
    priority.check([sinkStatus("search_index:es", "behind", 15_000)]);
    advance(2_000);
    // Caught up just in time: the count starts again at the next lag.
    priority.check([sinkStatus("search_index:es", "ok", 40)]);
    advance(29_000);
    priority.check([sinkStatus("search_index:es", "behind", 11_000)]);

    expect(priority.idle).toBe(true);
    expect(changes).toEqual([]);
  });

  test("events waiting with none taken count as lagging however few: on cores busy with other work, exporting gets busy CPU", () => {
    const { priority, changes, advance } = setUp();
    // A few events, waiting a little: a partial batch lingering, or a deferral under load.
    priority.check([sinkStatus("siem:sentinel", "ok", 40, 10_000)]);
    advance(40_000);
    priority.check([sinkStatus("siem:sentinel", "ok", 45, 12_000)]);
    expect(priority.idle).toBe(true);
    // Nothing taken for the stall limit, for the whole lag limit.
    priority.check([sinkStatus("siem:sentinel", "ok", 60, 15_000)]);
    advance(30_000);
    priority.check([sinkStatus("siem:sentinel", "ok", 90, 45_000)]);
    expect(priority.idle).toBe(false);
    expect(changes).toEqual([[false, "siem:sentinel (90 events) behind for 30 s"]]);
  });

  test("behind for the whole limit: exporting gets busy CPU; back on idle CPU once every delivering exporter caught up", async () => {
    const { exports, priority, changes, advance } = setUp();
    const es = await SearchIndexReceiver.start();
    open.push(es);
    exports.sink({
      kind: "search_index",
      name: "search_index:es",
      config: searchIndexExporterSchema.parse({ name: "es", url: es.url }),
    });
    await exports.built();
    const idleChild = exports.pid;
    expect(idleChild).toBeDefined();
    priority.check([sinkStatus("search_index:es", "ok", 10), sinkStatus("otel:collector", "behind", 20_000)]);
    advance(30_000);
    priority.check([
      sinkStatus("search_index:es", "ok", 10),
      sinkStatus("otel:collector", "spool_full", 90_000),
    ]);

    expect(priority.idle).toBe(false);
    expect(changes).toEqual([[false, "otel:collector (90000 events) behind for 30 s"]]);
    // The idle child is replaced (a thread cannot leave SCHED_IDLE): the next write starts one at plain niceness.
    expect(exports.pid).toBeUndefined();

    // Still too much waiting: stays.
    priority.check([sinkStatus("search_index:es", "ok", 10), sinkStatus("otel:collector", "ok", 5_000)]);
    expect(priority.idle).toBe(false);
    // A receiver that is down keeps its backlog whatever the priority: it does not hold exporting on busy CPU.
    priority.check([
      sinkStatus("search_index:es", "failing", 50_000),
      sinkStatus("otel:collector", "ok", 900),
    ]);

    expect(priority.idle).toBe(true);
    expect(changes.at(-1)).toEqual([true, "every exporter caught up"]);
  });
});
