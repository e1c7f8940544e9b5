// A process that records audit events without end into a spooled sink whose receiver is down, for the test that
// kills it with SIGKILL. Argument: the spool directory. Prints its instance id once, then keeps recording.
import { AuditLog } from "../../../src/audit/audit-log.ts";
import { SinkWriteError } from "../../../src/audit/sink.ts";

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: spooling-child.ts <spool dir>");
const log = new AuditLog({
  gateway: "child",
  sinks: [
    {
      name: "search_index:down",
      write: async () => {
        throw new SinkWriteError("receiver down");
      },
    },
  ],
  spool: { dir, maxBytes: 64 << 20 },
  batchSize: 50,
  lingerMs: 0,
  retryDelayMs: 50,
});
process.stdout.write(`${log.instance}\n`);
let next = 0;
const recordSome = (): void => {
  for (let i = 0; i < 20; i++) log.record({ kind: "call_completed", request_id: `r${next++}` });
  setImmediate(recordSome);
};
recordSome();
