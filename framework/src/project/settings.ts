import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";

/** svc.json: the project settings (every field documented in the README). */
export const settingsSchema = z
  .object({
    name: z.string().min(1, "must be a non-empty string"),
    description: z.string().optional(),
    version: z.string().default("0.1.0"),
    opentelemetry_enabled: z.boolean().default(false),
    opentelemetry_default_exporter: z.enum(["otlp_http", "console"]).default("otlp_http"),
    detailed_tracing: z.boolean().default(false),
    /** Serve MCP without sessions: every POST is answered on its own (no resumability, no server requests). */
    stateless_http: z.boolean().default(false),
    /** Legacy (deprecated): health checks on/off; the default endpoints need it true (default true). */
    health_check_enabled: z.boolean().optional(),
    /** Legacy (deprecated): path of the default health endpoint. */
    health_check_path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~\-/]*$/, "must be a path starting with '/'")
      .refine((p) => p !== "/mcp" && p !== "/ready", "must not be /mcp or /ready")
      .optional(),
    /** Legacy (deprecated): text body of the default health endpoint. */
    health_check_response: z.string().optional(),
  })
  .strict();

export type Settings = z.output<typeof settingsSchema>;

export const LEGACY_HEALTH_FIELDS = [
  "health_check_enabled",
  "health_check_path",
  "health_check_response",
] as const;

export class SettingsError extends Error {
  override name = "SettingsError";
}

/** Validates parsed svc.json content; the message names the file and every bad field. */
export function parseSettings(value: unknown, file = "svc.json"): Settings {
  const result = settingsSchema.safeParse(value);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    if (issue.code === "unrecognized_keys") return `${file}: unknown field(s) ${issue.keys.join(", ")}`;
    return `${file}: ${field}: ${issue.message}`;
  });
  throw new SettingsError(lines.join("\n"));
}

/** Reads and validates `<projectDir>/svc.json`. */
export async function loadSettings(projectDir: string): Promise<Settings> {
  const file = join(projectDir, "svc.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new SettingsError(
      `${file}: not found (is ${projectDir} an svc project? run 'svc init' to create one)`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SettingsError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
  return parseSettings(value, file);
}

export function deprecationWarning(field: string): string {
  return `svc.json field '${field}' is deprecated: write health.ts / readiness.ts with a check() instead`;
}

/** The legacy health fields present in raw svc.json content (each one logs a deprecation warning). */
export function legacyHealthFields(raw: Record<string, unknown>): string[] {
  return LEGACY_HEALTH_FIELDS.filter((field) => raw[field] !== undefined);
}
