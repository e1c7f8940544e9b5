// Log lines are gathered and written to stdout in batches: every 50 ms, or at once past 64 KiB. One write()
// per request line was a measurable share of the gateway's per-request cost (a syscall each, to a pipe or a
// file). Lines are at most 50 ms late; whatever is pending is written synchronously when the process exits
// (also after an uncaught exception), so only a SIGKILL can lose the last 50 ms.
const FLUSH_MS = 50;
const FLUSH_BYTES = 64 * 1024;

let pending = "";
let timer: NodeJS.Timeout | undefined;

function flush(): void {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (pending === "") return;
  const out = pending;
  pending = "";
  process.stdout.write(out);
}

process.on("exit", flush);

export function writeStdoutBatched(line: string): void {
  pending += line;
  if (pending.length >= FLUSH_BYTES) {
    flush();
    return;
  }
  if (timer === undefined) {
    timer = setTimeout(flush, FLUSH_MS);
    timer.unref();
  }
}
