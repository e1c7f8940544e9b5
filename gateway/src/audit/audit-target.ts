// Where this process writes its audit trail: stdout as JSON lines by default, or the file named by SVC_AUDIT_FILE
// (appended to, created 0600). Opened at start, so a path that cannot be written stops the start with an error
// naming the variable instead of losing events later.
import { createWriteStream, openSync } from "node:fs";
import { streamSink } from "./audit-log.ts";
import type { AuditSink } from "./sink.ts";

export interface AuditTarget {
  sink: AuditSink;
  /** `stdout` or the file path, for the start log. */
  description: string;
  /** Flushes and closes the file (stdout stays open). */
  close(): Promise<void>;
}

export function auditTargetFrom(env: Record<string, string | undefined>): AuditTarget {
  const path = env.SVC_AUDIT_FILE?.trim();
  if (path === undefined || path === "") {
    return { sink: streamSink(process.stdout), description: "stdout", close: async () => {} };
  }
  let fd: number;
  try {
    fd = openSync(path, "a", 0o600);
  } catch (error) {
    throw new Error(`SVC_AUDIT_FILE '${path}' cannot be opened for appending: ${(error as Error).message}`);
  }
  const stream = createWriteStream("", { fd });
  // Write failures reach each write's callback, where AuditLog retries the batch; without a listener the same
  // error as an event would crash the process.
  stream.on("error", () => {});
  return {
    sink: streamSink(stream, "file"),
    description: path,
    close: () => new Promise<void>((resolve) => stream.end(() => resolve())),
  };
}
