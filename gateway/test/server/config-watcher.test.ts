import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import { watchConfigFile } from "../../src/server/config-watcher.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function changeSeen(watchDirectory: boolean, change: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-watch-"));
  dirs.push(dir);
  const path = join(dir, "config.yaml");
  await writeFile(path, "one");
  let notify: () => void = () => {};
  const seen = new Promise<void>((resolve) => {
    notify = resolve;
  });
  const watcher = watchConfigFile({
    path,
    pollMs: watchDirectory ? 0 : 20,
    watchDirectory,
    logger: createLogger({ level: "silent" }),
    onChange: () => notify(),
  });
  // Let the poller take its first fingerprint before the change.
  await new Promise((resolve) => setTimeout(resolve, 60));
  await change(path);
  await seen;
  watcher.close();
}

test("the directory watch notices a file replaced by rename", async () => {
  await changeSeen(true, async (path) => {
    await writeFile(`${path}.new`, "two");
    await rename(`${path}.new`, path);
  });
});

test("the polling fallback alone notices a change (filesystems where watching does not work)", async () => {
  await changeSeen(false, async (path) => {
    await writeFile(`${path}.new`, "two, longer");
    await rename(`${path}.new`, path);
  });
});

test("other files in the directory (a log file, say) do not count as config changes", async () => {
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-watch-"));
  dirs.push(dir);
  const path = join(dir, "config.yaml");
  await writeFile(path, "one");
  const calls: number[] = [];
  let notify: () => void = () => {};
  const seen = new Promise<void>((resolve) => {
    notify = resolve;
  });
  const watcher = watchConfigFile({
    path,
    pollMs: 0,
    logger: createLogger({ level: "silent" }),
    onChange: () => {
      calls.push(Date.now());
      notify();
    },
  });
  await writeFile(join(dir, "gateway.log"), "a line\n");
  // Longer than the debounce: an event for the log file would have been delivered by now.
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(calls).toHaveLength(0);
  await writeFile(path, "two");
  await seen;
  watcher.close();
});
