// Every request spends at least one Redis command (the rate-limit step), so under load the commands of many requests
// are sent in the same turn of the event loop. Written one by one, each costs a write syscall here and a read on the
// Redis side; corked until the turn ends, they leave as one write and Redis reads them at once, which is most of what
// Redis spends per request on the bench's secured path (gateway/BENCHMARKS.md has the figures).
// Unlike ioredis's enableAutoPipelining, batches do not wait for each other: a batch is sent while an earlier one is
// still in flight, so a slow reply never holds back the next requests' commands (and their timeouts stay as they are).
import type { Writable } from "node:stream";

const corked = new WeakSet<Writable>();

/**
 * Holds back what is written to `stream` until the current turn of the event loop has run its I/O callbacks, then
 * sends it as one write. Cheap to call for every command: the stream is corked once per turn.
 */
export function coalesceWritesThisTurn(stream: Writable | undefined): void {
  if (stream === undefined || corked.has(stream)) return;
  corked.add(stream);
  stream.cork();
  setImmediate(() => {
    corked.delete(stream);
    stream.uncork();
  });
}
