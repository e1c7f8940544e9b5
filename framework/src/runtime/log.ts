/** One JSON line per event on stdout; `msg` is stable text tests and operators can match. */
export type Log = (msg: string, fields?: Record<string, unknown>, level?: "info" | "warn" | "error") => void;

export const log: Log = (msg, fields = {}, level = "info") => {
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  if (level === "info") process.stdout.write(`${line}\n`);
  else process.stderr.write(`${line}\n`);
};
