// Fail static: the last good documents from the control plane (organization policy; in centralized mode also the
// configuration) are written to a local file, so a gateway restarted while the control plane is down still serves
// the policy it last enforced. Written atomically (a temporary file renamed over the old one), readable by the
// gateway's user only. The configuration is the operator's rendered YAML, whose secrets are `${VAR}` references
// resolved from the environment at load: no secret is written here. What is read back is validated again, like
// anything from the control plane, before it is used.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const CACHE_FILE_ENV = "SVC_CONTROL_PLANE_CACHE_FILE";

export interface CachedDocument {
  etag: string;
  /** When the gateway received it (ms since the epoch): the age /health reports during an outage. */
  receivedAt: number;
  body: unknown;
}

export interface CacheContents {
  gateway_id: string;
  policy?: CachedDocument;
  configuration?: CachedDocument;
}

/** $SVC_CONTROL_PLANE_CACHE_FILE, else a file per gateway id in the temporary directory. */
export function cacheFilePath(env: Record<string, string | undefined>, gatewayId: string): string {
  const configured = env[CACHE_FILE_ENV]?.trim();
  return configured ? configured : join(tmpdir(), `svc-gateway-control-plane-${gatewayId}.json`);
}

export async function readCache(path: string, gatewayId: string): Promise<CacheContents | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed = JSON.parse(text) as CacheContents;
  // A cache of another gateway (a shared volume, a copied file) is not ours to enforce.
  if (parsed?.gateway_id !== gatewayId) return undefined;
  return parsed;
}

export async function writeCache(path: string, contents: CacheContents): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, JSON.stringify(contents), { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
