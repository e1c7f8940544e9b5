// Notices when the config file may have changed. Watches the file's DIRECTORY, not the file: a Kubernetes
// ConfigMap mount updates by writing a new `..2026_…` directory and atomically renaming a new `..data`
// symlink over the old one, so the file's own inode never changes and a watch on it would never fire.
// fs.watch is not reliable everywhere (network filesystems, some container runtimes), so a poll of the
// file's identity (inode, size, mtime, through the symlinks) runs beside it. Both only say "look again":
// the reloader decides whether the content actually changed.
import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import type { Logger } from "../log/logger.ts";
import type { ConfigSource } from "./config-source.ts";

export interface ConfigWatcher {
  close(): void;
}

const DEBOUNCE_MS = 100;

async function fingerprint(path: string): Promise<string> {
  try {
    const info = await stat(path);
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
  } catch {
    return "missing";
  }
}

export function watchConfigFile(options: {
  path: string;
  pollMs: number;
  logger: Logger;
  onChange: () => void;
  /** false: polling only (tests of the fallback). */
  watchDirectory?: boolean;
}): ConfigWatcher {
  const path = resolve(options.path);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(options.onChange, DEBOUNCE_MS);
    timer.unref();
  };

  // Only events that can concern the config file count: the file itself, or the kubelet's `..`-prefixed
  // entries (`..data`, `..2026_…`). Other files in the directory (a log file, say) must not cause reloads.
  const file = basename(path);
  const relevant = (_event: string, name: string | Buffer | null): void => {
    const changed = name?.toString();
    if (changed === undefined || changed === file || changed.startsWith("..")) schedule();
  };

  let watcher: FSWatcher | undefined;
  if (options.watchDirectory !== false) {
    try {
      watcher = watch(dirname(path), { persistent: false }, relevant);
      watcher.on("error", (error) => {
        options.logger.warn("config directory watch failed; polling only", { error: error.message });
        watcher?.close();
      });
    } catch (error) {
      options.logger.warn("cannot watch the config directory; polling only", {
        directory: dirname(path),
        error: (error as Error).message,
      });
    }
  }

  let poller: NodeJS.Timeout | undefined;
  if (options.pollMs > 0) {
    let last: string | undefined;
    void fingerprint(path).then((value) => {
      last = value;
    });
    poller = setInterval(() => {
      void fingerprint(path).then((value) => {
        if (last !== undefined && value !== last) schedule();
        last = value;
      });
    }, options.pollMs);
    poller.unref();
  }

  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
      clearInterval(poller);
      watcher?.close();
    },
  };
}

/** The configuration file as a ConfigSource: a change it may have seen asks the reloader to look again. */
export function fileConfigSource(options: { path: string; pollMs: number; logger: Logger }): ConfigSource {
  let watcher: ConfigWatcher | undefined;
  return {
    start: (apply) => {
      watcher = watchConfigFile({ ...options, onChange: () => void apply({ kind: "file", force: false }) });
    },
    close: () => watcher?.close(),
  };
}
