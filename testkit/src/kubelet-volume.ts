import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// Writes a ConfigMap's data into a directory exactly the way the kubelet's atomic writer lays out a
// ConfigMap volume: the files live in a timestamped `..<time>` directory, `..data` is a symlink to it, and
// each key is a symlink `<key> -> ..data/<key>`. An update writes a new timestamped directory and renames a
// fresh `..data_tmp` symlink over `..data` (one atomic step), then deletes the old directory — so the
// file the gateway was given never changes inode, and only a watch on the directory sees the update.

export class KubeletConfigMapVolume {
  readonly directory: string;
  private generation = 0;

  constructor(directory: string) {
    this.directory = directory;
    mkdirSync(directory, { recursive: true });
  }

  write(data: Record<string, string>): void {
    this.generation += 1;
    const stamp = `..${new Date().toISOString().replace(/[-:.]/g, "_")}.${this.generation}`;
    const payload = join(this.directory, stamp);
    mkdirSync(payload);
    for (const [key, value] of Object.entries(data))
      writeFileSync(join(payload, key), value, { mode: 0o644 });

    let previous: string | undefined;
    try {
      previous = readlinkSync(join(this.directory, "..data"));
    } catch {
      previous = undefined;
    }
    const temporary = join(this.directory, "..data_tmp");
    rmSync(temporary, { force: true });
    symlinkSync(stamp, temporary);
    renameSync(temporary, join(this.directory, "..data"));
    for (const key of Object.keys(data)) {
      try {
        symlinkSync(join("..data", key), join(this.directory, key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    if (previous) rmSync(join(this.directory, previous), { recursive: true, force: true });
  }
}
