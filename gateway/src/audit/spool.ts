// The on-disk backlog of one exporter sink, so events survive a restart (or SIGKILL) while the exporter is down.
//
// Layout: one directory per sink, holding append-only segment files `<12-digit number>.jsonl` (one chained event per
// line) and `cursor.json`, the position of the first event the sink has not yet accepted. Every event for the sink is
// appended here first (write-ahead) by the background flush, never by the request path; the sink's queue reads
// batches from the cursor and moves the cursor past a batch only after the sink accepted all of it, so delivery is at
// least once: the cursor is saved at most once a second (and on close), so a crash redelivers what the sink accepted
// since the last save (receivers deduplicate on the event's `hash`).
//
// Durability (fsync policy): the appends of 10 ms are one write() to the segment, so once it returns the events survive the
// process being killed (they are in the kernel); the segment is fdatasync'ed at most once a second while writes come
// in, and on close. A machine crash can lose up to the last second of appends; a torn last line is cut off on open.
//
// Bound: the bytes not yet accepted by the sink (plus appends in progress) never exceed `maxBytes`; an append that would
// go past it takes only the events that fit and the caller counts the rest as dropped. The disk can hold up to one more segment of
// already-delivered events, until the cursor leaves that segment and it is deleted.
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import type { ChainedAuditEvent } from "./audit-event.ts";
import { eventsText } from "./event-json.ts";
import type { Backlog, BacklogBatch } from "./memory-backlog.ts";

export interface SpoolOptions {
  /** This sink's own directory (created 0700 if missing). */
  dir: string;
  maxBytes: number;
  /** A new segment is started past this size; default min(16 MiB, maxBytes / 4). */
  segmentBytes?: number;
  /** Told about a failed write or fsync (the events of a failed append count as dropped). */
  onError?: (error: unknown) => void;
}

interface Position {
  segment: number;
  offset: number;
}

/**
 * A batch read from the cursor: the lines as written, not parsed (the export process parses them, off the gateway's
 * thread); `ack` it once the sink accepted every event of it.
 */
export type SpoolBatch = Extract<BacklogBatch, { text: Buffer }> & { end: Position; bytes: number };

const SEGMENT = /^(\d{12})\.jsonl$/;
const segmentName = (segment: number): string => `${String(segment).padStart(12, "0")}.jsonl`;
/** Bytes read from a segment at once (a batch of 256 typical events is ~130 KB); a longer line grows the buffer. */
const READ_CHUNK = 256 << 10;
const FSYNC_EVERY_MS = 1000;
/**
 * The cursor is saved at most this often (and on close, and whenever it enters a new segment): writing cursor.json on
 * every accepted batch cost ~1 ms of system time each. A crash re-sends what the sink accepted since the last save, at
 * most this long of deliveries; that is the at-least-once the spool already promises, and receivers dedup on `hash`.
 */
const CURSOR_SAVE_EVERY_MS = 1000;
/** Appends this close together share one write (see append). */
const GROUP_COMMIT_MS = 10;

/**
 * Bytes of recent appends kept in memory, so a sink that keeps up never reads its spool back. Kept as the written
 * bytes, not the events: outside V8's heap, they cost the garbage collector nothing while exports wait (a busy
 * gateway holds them back, defer-under-load.ts), where as many retained event objects were copied by every
 * collection. The buffers are the appended batches' own, shared by every spool that took them.
 */
const RECENT_MAX_BYTES = 16 << 20;

/** One serialisation per batch even when several spooled sinks take it (and one buffer, which they share). */
const encodedBatches = new WeakMap<readonly ChainedAuditEvent[], Buffer>();
function encode(events: readonly ChainedAuditEvent[]): Buffer {
  let encoded = encodedBatches.get(events);
  if (encoded === undefined) {
    encoded = eventsText(events);
    encodedBatches.set(events, encoded);
  }
  return encoded;
}

/** An append waiting for the next write: how many events it took (from the start) and their lines. */
interface QueuedAppend {
  taken: number;
  buffer: Buffer;
}

/** Written bytes (whole lines) and where they are. */
interface WrittenChunk {
  segment: number;
  start: number;
  buffer: Buffer;
}

export class Spool implements Backlog<SpoolBatch> {
  onWritten: (() => void) | undefined;
  readonly dir: string;
  readonly #maxBytes: number;
  readonly #segmentBytes: number;
  readonly #options: SpoolOptions;
  /** Size of every segment on disk, written bytes only. */
  readonly #sizes = new Map<number, number>();
  #cursor: Position = { segment: 0, offset: 0 };
  /** The cursor as last written to cursor.json (the same object: a move replaces it). */
  #savedCursor: Position | undefined;
  #cursorTimer: NodeJS.Timeout | undefined;
  #savingCursor: Promise<void> = Promise.resolve();
  #writeSegment = 0;
  #writer: FileHandle | undefined;
  #reader: { segment: number; handle: FileHandle } | undefined;
  readonly #opened: Promise<void>;
  #openError: unknown;
  #writing: Promise<void>;
  /** Appends not yet handed to a write, and the timer that will hand them over. */
  readonly #queued: QueuedAppend[] = [];
  #groupTimer: NodeJS.Timeout | undefined;
  #dirty = false;
  #fsyncTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** Undelivered events and bytes on disk, and bytes of appends not yet written. */
  #events = 0;
  #bytes = 0;
  #pendingEvents = 0;
  #pendingBytes = 0;
  /**
   * The last written chunks (at most RECENT_MAX_BYTES), in file order, always running up to the end of what is
   * written: when the cursor is inside them, read() serves from here instead of the disk.
   */
  #recent: WrittenChunk[] = [];
  #recentBytes = 0;

  /** `after`: a previous user of the same directory (a sink being replaced) that must let go first. */
  constructor(options: SpoolOptions, after: Promise<unknown> = Promise.resolve()) {
    this.dir = options.dir;
    this.#options = options;
    this.#maxBytes = options.maxBytes;
    this.#segmentBytes =
      options.segmentBytes ?? Math.max(1, Math.min(16 << 20, Math.floor(options.maxBytes / 4)));
    this.#opened = after
      .catch(() => {})
      .then(() => this.#open())
      .catch((error: unknown) => {
        throw new Error(
          `audit spool directory '${this.dir}' cannot be used (SVC_AUDIT_SPOOL_DIR): ${(error as Error).message}`,
          { cause: error },
        );
      });
    // Appends wait for the opening; after a failed one they are skipped (the queue counts their events as lost).
    this.#writing = this.#opened.catch((error: unknown) => {
      this.#openError = error;
    });
  }

  /** Resolves once the spool on disk has been read (backlog counted); rejects when the directory is unusable. */
  ready(): Promise<void> {
    return this.#opened;
  }

  /** Undelivered events, appends in progress included. */
  get events(): number {
    return this.#events + this.#pendingEvents;
  }

  get bytes(): number {
    return this.#bytes + this.#pendingBytes;
  }

  /** Events appended but not yet readable: the queue waits for them rather than for new ones. */
  get pendingEvents(): number {
    return this.#pendingEvents;
  }

  /**
   * Queues the batch for appending, as much of it (from the start) as fits under the byte cap; returns how many events
   * were taken. The rest is the caller's to count as dropped.
   */
  append(events: readonly ChainedAuditEvent[]): number {
    if (this.#closed || events.length === 0) return 0;
    const room = this.#maxBytes - this.#bytes - this.#pendingBytes;
    let buffer = encode(events);
    let taken = events.length;
    if (buffer.length > room) {
      // The whole lines that fit.
      taken = 0;
      let size = 0;
      for (;;) {
        const end = buffer.indexOf(10, size) + 1;
        if (end === 0 || end > room) break;
        size = end;
        taken += 1;
      }
      if (taken === 0) return 0;
      buffer = buffer.subarray(0, size);
    }
    this.#pendingEvents += taken;
    this.#pendingBytes += buffer.length;
    this.#queued.push({ taken, buffer });
    // Group commit: appends within GROUP_COMMIT_MS go out in one write(). The gateway hands each background flush
    // (a handful of events under load) to every exporter's spool, and one write per flush per exporter, each a
    // syscall on the thread pool plus a promise, was the largest CPU cost of exporting. The queue lingers far longer
    // than this before sending, so delivery is not later for it.
    if (this.#groupTimer === undefined) {
      this.#groupTimer = setTimeout(() => this.#commitQueued(), GROUP_COMMIT_MS);
      this.#groupTimer.unref();
    }
    return taken;
  }

  /** Chains a write of every queued append after the writes before it. */
  #commitQueued(): void {
    clearTimeout(this.#groupTimer);
    this.#groupTimer = undefined;
    if (this.#queued.length > 0) this.#writing = this.#writing.then(() => this.#writeQueued());
  }

  async #writeQueued(): Promise<void> {
    const parts = this.#queued.splice(0);
    const events = parts.reduce((sum, part) => sum + part.taken, 0);
    const bytes = parts.reduce((sum, part) => sum + part.buffer.length, 0);
    try {
      if (this.#openError !== undefined) return;
      const buffers = parts.map((part) => part.buffer);
      const at = await this.#write(buffers, bytes);
      this.#events += events;
      this.#bytes += bytes;
      let start = at.offset;
      for (const buffer of buffers) {
        this.#recent.push({ segment: at.segment, start, buffer });
        this.#recentBytes += buffer.length;
        start += buffer.length;
      }
      let drop = 0;
      while (this.#recentBytes > RECENT_MAX_BYTES && drop < this.#recent.length) {
        this.#recentBytes -= (this.#recent[drop] as WrittenChunk).buffer.length;
        drop += 1;
      }
      if (drop > 0) this.#recent.splice(0, drop);
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#pendingEvents -= events;
      this.#pendingBytes -= bytes;
      this.onWritten?.();
    }
  }

  /** Up to `max` events from the cursor, in order; none when nothing written is waiting. */
  async read(max: number): Promise<SpoolBatch> {
    const recent = this.#readRecent(max);
    if (recent !== undefined) return recent;
    let position = { ...this.#cursor };
    for (;;) {
      const size = this.#sizes.get(position.segment);
      if (size !== undefined && position.offset < size) {
        const { text, lines } = await this.#readLines(position, size, max);
        if (lines > 0)
          return {
            text,
            end: { ...position, offset: position.offset + text.length },
            bytes: text.length,
            lines,
          };
      }
      // Nothing (complete) left in this segment: move on only when it is finished, i.e. not the one being written.
      const next = [...this.#sizes.keys()].filter((s) => s > position.segment).sort((a, b) => a - b)[0];
      if (position.segment >= this.#writeSegment || next === undefined) {
        return { text: Buffer.alloc(0), end: this.#cursor, bytes: 0, lines: 0 };
      }
      position = { segment: next, offset: 0 };
    }
  }

  /** Up to `max` lines from the cursor out of the recent chunks; undefined when the cursor is not inside them. */
  #readRecent(max: number): SpoolBatch | undefined {
    const { segment, offset } = this.#cursor;
    let index = this.#recent.findIndex(
      (chunk) =>
        chunk.segment === segment && chunk.start <= offset && offset < chunk.start + chunk.buffer.length,
    );
    if (index === -1) return undefined;
    const pieces: Buffer[] = [];
    let lines = 0;
    let end = offset;
    // Chunks of one segment follow each other in the file; the batch stops at the segment's end, as on disk.
    for (; index < this.#recent.length && lines < max; index++) {
      const chunk = this.#recent[index] as WrittenChunk;
      if (chunk.segment !== segment || (chunk.start !== end && pieces.length > 0)) break;
      const from = end - chunk.start;
      let at = from;
      // A chunk holds whole lines: each ends in a newline.
      while (lines < max && at < chunk.buffer.length) {
        const newline = chunk.buffer.indexOf(10, at);
        if (newline === -1) break;
        at = newline + 1;
        lines += 1;
      }
      pieces.push(chunk.buffer.subarray(from, at));
      end = chunk.start + at;
    }
    const text = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    return { text, end: { segment, offset: end }, bytes: end - offset, lines };
  }

  /** The sink accepted the batch: the cursor moves past it (saved to disk) and finished segments are deleted. */
  async ack(batch: SpoolBatch): Promise<void> {
    if (batch.lines === 0) return;
    const previous = this.#cursor.segment;
    this.#cursor = batch.end;
    // A finished segment read to its end is done with: the cursor moves to the next one so it can be deleted now.
    while (
      this.#cursor.segment < this.#writeSegment &&
      this.#cursor.offset >= (this.#sizes.get(this.#cursor.segment) ?? 0)
    ) {
      const current = this.#cursor.segment;
      const next = [...this.#sizes.keys()].filter((s) => s > current).sort((a, b) => a - b)[0];
      this.#cursor = { segment: next ?? this.#writeSegment, offset: 0 };
    }
    let done = 0;
    for (const chunk of this.#recent) {
      const behind =
        chunk.segment < this.#cursor.segment ||
        (chunk.segment === this.#cursor.segment && chunk.start + chunk.buffer.length <= this.#cursor.offset);
      if (!behind) break;
      this.#recentBytes -= chunk.buffer.length;
      done += 1;
    }
    if (done > 0) this.#recent.splice(0, done);
    this.#events -= batch.lines;
    this.#bytes -= batch.bytes;
    if (this.#cursor.segment !== previous) {
      // Segments are deleted only behind a saved cursor, so the one on disk never points into a deleted file.
      await this.#saveCursor();
      return;
    }
    this.#cursorTimer ??= setTimeout(() => {
      this.#cursorTimer = undefined;
      void this.#saveCursor();
    }, CURSOR_SAVE_EVERY_MS).unref();
  }

  /** Writes the cursor (atomically: a temporary file renamed) and deletes the segments before it; one save at a time. */
  #saveCursor(): Promise<void> {
    clearTimeout(this.#cursorTimer);
    this.#cursorTimer = undefined;
    this.#savingCursor = this.#savingCursor.then(async () => {
      const cursor = this.#cursor;
      if (cursor === this.#savedCursor || this.#openError !== undefined) return;
      try {
        const temporary = join(this.dir, "cursor.json.tmp");
        await writeFile(temporary, JSON.stringify(cursor), { mode: 0o600 });
        await rename(temporary, join(this.dir, "cursor.json"));
        this.#savedCursor = cursor;
        await this.#deleteBefore(cursor.segment);
      } catch (error) {
        this.#options.onError?.(error);
      }
    });
    return this.#savingCursor;
  }

  /** Waits for appends in progress, syncs and closes the files; what is undelivered stays for the next start. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#commitQueued();
    await this.#writing.catch(() => {});
    await this.#saveCursor();
    clearTimeout(this.#fsyncTimer);
    if (this.#writer !== undefined) {
      if (this.#dirty)
        await this.#writer.datasync().catch((error: unknown) => this.#options.onError?.(error));
      await this.#writer.close().catch(() => {});
      this.#writer = undefined;
    }
    await this.#reader?.handle.close().catch(() => {});
    this.#reader = undefined;
  }

  async #open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const segments = (await readdir(this.dir))
      .map((name) => SEGMENT.exec(name)?.[1])
      .filter((match): match is string => match !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const saved = await readFile(join(this.dir, "cursor.json"), "utf8").then(
      (text) => JSON.parse(text) as Position,
      () => undefined,
    );
    this.#cursor =
      saved !== undefined && Number.isInteger(saved.segment) && Number.isInteger(saved.offset)
        ? saved
        : { segment: segments[0] ?? 1, offset: 0 };
    for (const segment of segments) {
      if (segment < this.#cursor.segment) {
        await rm(join(this.dir, segmentName(segment)), { force: true });
        continue;
      }
      const path = join(this.dir, segmentName(segment));
      let content = await readFile(path);
      // A write torn by a machine crash leaves a line without its newline: cut it off, it was never complete.
      const end = content.lastIndexOf(10) + 1;
      if (end < content.length) {
        const handle = await open(path, "r+");
        await handle.truncate(end);
        await handle.close();
        content = content.subarray(0, end);
      }
      this.#sizes.set(segment, content.length);
      const from = segment === this.#cursor.segment ? Math.min(this.#cursor.offset, content.length) : 0;
      for (let i = from; i < content.length; i++) if (content[i] === 10) this.#events += 1;
      this.#bytes += content.length - from;
    }
    if (!this.#sizes.has(this.#cursor.segment) && segments.length > 0) {
      // The cursor's segment is gone (deleted by hand): start at the first one that is left.
      const first = segments.find((s) => s > this.#cursor.segment);
      if (first !== undefined) this.#cursor = { segment: first, offset: 0 };
    }
    // What the next start would derive from the disk as it is: nothing to save until the cursor moves.
    this.#savedCursor = this.#cursor;
    // Appends go to a fresh segment, so files from before a crash are only ever read.
    await this.#startSegment(Math.max(this.#cursor.segment, segments.at(-1) ?? 0) + 1);
  }

  async #startSegment(segment: number): Promise<void> {
    if (this.#writer !== undefined) {
      if (this.#dirty) await this.#writer.datasync();
      await this.#writer.close();
      this.#dirty = false;
    }
    this.#writer = await open(join(this.dir, segmentName(segment)), "a", 0o600);
    this.#writeSegment = segment;
    this.#sizes.set(segment, (await stat(join(this.dir, segmentName(segment)))).size);
  }

  /** Appends the buffers, in one write, to the current segment (starting a new one when it is full); returns where they went. */
  async #write(buffers: Buffer[], length: number): Promise<Position> {
    if ((this.#sizes.get(this.#writeSegment) ?? 0) >= this.#segmentBytes) {
      await this.#startSegment(this.#writeSegment + 1);
    }
    const at = { segment: this.#writeSegment, offset: this.#sizes.get(this.#writeSegment) ?? 0 };
    const writer = this.#writer as FileHandle;
    let { bytesWritten: written } = await writer.writev(buffers);
    if (written < length) {
      // A short write (rare on a file): the rest, from where it stopped.
      const rest = Buffer.concat(buffers, length);
      while (written < length) {
        const { bytesWritten } = await writer.write(rest, written, length - written);
        written += bytesWritten;
      }
    }
    this.#sizes.set(this.#writeSegment, (this.#sizes.get(this.#writeSegment) ?? 0) + length);
    this.#dirty = true;
    this.#fsyncTimer ??= setTimeout(() => {
      this.#fsyncTimer = undefined;
      this.#writing = this.#writing.then(async () => {
        if (!this.#dirty || this.#writer === undefined) return;
        this.#dirty = false;
        await this.#writer.datasync().catch((error: unknown) => this.#options.onError?.(error));
      });
    }, FSYNC_EVERY_MS).unref();
    return at;
  }

  async #readLines(position: Position, size: number, max: number): Promise<{ text: Buffer; lines: number }> {
    if (this.#reader?.segment !== position.segment) {
      await this.#reader?.handle.close().catch(() => {});
      this.#reader = {
        segment: position.segment,
        handle: await open(join(this.dir, segmentName(position.segment)), "r"),
      };
    }
    const available = size - position.offset;
    let length = Math.min(READ_CHUNK, available);
    for (;;) {
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await this.#reader.handle.read(buffer, 0, length, position.offset);
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      let lines = 0;
      while (lines < max) {
        const newline = chunk.indexOf(10, start);
        if (newline === -1) break;
        start = newline + 1;
        lines += 1;
      }
      if (start > 0 || length >= available) return { text: chunk.subarray(0, start), lines };
      length = Math.min(length * 2, available);
    }
  }

  async #deleteBefore(segment: number): Promise<void> {
    for (const known of [...this.#sizes.keys()]) {
      if (known >= segment) continue;
      this.#sizes.delete(known);
      if (this.#reader?.segment === known) {
        await this.#reader.handle.close().catch(() => {});
        this.#reader = undefined;
      }
      await rm(join(this.dir, segmentName(known)), { force: true });
    }
  }
}

/** A sink's directory name: its name with anything but letters, digits, `_`, `.` and `-` percent-encoded. */
export function spoolDirName(sinkName: string): string {
  return sinkName.replace(
    /[^A-Za-z0-9_.-]/g,
    (c) => `%${c.codePointAt(0)?.toString(16).toUpperCase().padStart(2, "0")}`,
  );
}
