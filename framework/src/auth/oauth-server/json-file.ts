import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { AuthConfigError } from "../errors.ts";

/**
 * A JSON document on disk, written atomically (temp file + rename) and readable by the owner only.
 * Writes are serialised so two quick updates cannot interleave.
 */
export class JsonFile<T> {
  readonly path: string;
  private pending: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** The stored document, or `fallback` when the file does not exist yet. A corrupt file stops the start. */
  async read(fallback: T, validate: (value: unknown) => T): Promise<T> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return fallback;
      throw new AuthConfigError(this.path, `cannot be read: ${(error as Error).message}`);
    }
    try {
      return validate(JSON.parse(text));
    } catch (error) {
      throw new AuthConfigError(this.path, `is not a valid state file: ${(error as Error).message}`);
    }
  }

  /** Replaces the document. */
  write(value: T): Promise<void> {
    const text = `${JSON.stringify(value, null, 2)}\n`;
    const run = async () => {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const temporary = `${this.path}.${process.pid}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, this.path);
    };
    this.pending = this.pending.then(run, run);
    return this.pending;
  }
}
