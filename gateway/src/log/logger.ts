// Structured JSON logs, one object per line on stdout. The level comes from LOG_LEVEL; the request id is
// taken from the request context (AsyncLocalStorage), so every line written while serving a request carries
// it without threading a logger through every call. Values under secret-looking keys are never written.
import { AsyncLocalStorage } from "node:async_hooks";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

/** Request-scoped values every log line should carry. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

const SECRET_KEY = /authorization|api[-_]?key|secret|token|password|cookie|credential/i;

/** Key → is it secret-looking. Log keys are a small fixed set, so the regex runs once per key name. */
const secretKeys = new Map<string, boolean>();

function isSecretKey(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY.test(key);
    if (secretKeys.size < 10_000) secretKeys.set(key, secret);
  }
  return secret;
}

/** Copies `value` with every secret-looking key's value replaced, at any depth. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    out[key] = isSecretKey(key) ? "[REDACTED]" : redact((value as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}

export function parseLogLevel(text: string | undefined): LogLevel {
  const level = (text ?? "info").trim().toLowerCase();
  if (level === "warning") return "warn";
  return (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : "info";
}

export interface Logger {
  readonly level: LogLevel;
  enabled(level: LogLevel): boolean;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function createLogger(options: {
  level: LogLevel;
  write?: (line: string) => void;
  base?: LogFields;
}): Logger {
  const threshold = RANK[options.level];
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const emit = (level: LogLevel, msg: string, fields: LogFields | undefined): void => {
    if (RANK[level] < threshold) return;
    const requestId = requestContext.getStore()?.requestId;
    const record: LogFields = { time: new Date().toISOString(), level, msg, ...options.base };
    if (requestId !== undefined) record.request_id = requestId;
    if (fields !== undefined) {
      for (const key in fields) {
        const value = fields[key];
        record[key] = isSecretKey(key) ? "[REDACTED]" : redact(value);
      }
    }
    write(`${JSON.stringify(record)}\n`);
  };
  return {
    level: options.level,
    enabled: (level) => RANK[level] >= threshold,
    debug: (msg, fields) => emit("debug", msg, fields),
    info: (msg, fields) => emit("info", msg, fields),
    warn: (msg, fields) => emit("warn", msg, fields),
    error: (msg, fields) => emit("error", msg, fields),
  };
}
