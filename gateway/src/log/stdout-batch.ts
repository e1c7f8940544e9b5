// Log lines written while serving requests are gathered and written to stdout once per event-loop turn:
// under load many requests finish in the same turn, and one write() instead of one per line is a measurable
// share of the gateway's per-request cost. Lines are at most one turn late, and whatever is pending is
// written synchronously when the process exits.
let pending = "";
let scheduled = false;

function flush(): void {
  scheduled = false;
  if (pending === "") return;
  const out = pending;
  pending = "";
  process.stdout.write(out);
}

process.on("exit", flush);

export function writeStdoutBatched(line: string): void {
  pending += line;
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}
