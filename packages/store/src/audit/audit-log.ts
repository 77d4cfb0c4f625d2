import { randomUUID } from "node:crypto";
import { fstatSync, mkdirSync, statSync } from "node:fs";
import { open as openHandle, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createCheckpointBody,
  createCheckpointInput,
  createRedactor,
  DEFAULT_REDACTION,
  NO_PATTERNS,
  redactAuditInput,
  sealAuditInput,
  signCheckpoint,
  type AuditEventInput,
  type AuditEventV02,
  type CheckpointSigner,
  type RedactionRules,
  type Redactor,
} from "@acp/core";
import { anchorPathOf, writeAnchor } from "./anchor.js";
import { acquireFileLock, LOCK_HANDOVER_MS, type FileLockOptions } from "./file-lock.js";
import { AuditLogError } from "./audit-log-error.js";
import { EMPTY_POSITION, scanAuditLog, type ChainPosition } from "./scan-log.js";
import { keepTornTailAside, tornTailEvent, type TornTail } from "./torn-tail.js";

/** `every`: each event is fsynced before its `append` resolves. `batch`: group commit, one fsync per batch. */
export type AuditFsyncMode = "every" | "batch";

/** Options of {@link openAuditLog}. */
export interface AuditLogOptions {
  /** Default `every`. */
  readonly fsync?: AuditFsyncMode;
  /** Signs checkpoints; without it no checkpoint is written. */
  readonly signer?: CheckpointSigner;
  /** A signed checkpoint after this many events (default 1000), and at `close()`. */
  readonly checkpointEvery?: number;
  /** Redaction rules applied before hashing (default {@link DEFAULT_REDACTION}); `false` turns it off. */
  readonly redaction?: RedactionRules | false;
  /** Known secret values (the vault entries in use), redacted wherever they appear; read on every append. */
  readonly secrets?: () => readonly string[];
  /** The clock for event and checkpoint timestamps. */
  readonly clock: () => Date;
  /** Unique part of event ids (`ae_<this>`); default a random UUID. */
  readonly randomId?: () => string;
  /** Most events written in one batch (default 4096). */
  readonly maxBatch?: number;
  readonly lock?: FileLockOptions;
}

/** An open, append-only audit log. */
export interface AuditLog {
  readonly path: string;
  /** `<path>.checkpoint`: the latest signed checkpoint, kept beside the log. */
  readonly anchorPath: string;
  /** The torn tail recovered when the log was opened, if there was one. */
  readonly recovered: TornTail | null;
  /** Redacts, hashes, chains and durably appends one event; resolves with the event as written. */
  append(input: AuditEventInput): Promise<AuditEventV02>;
  /** Writes a signed checkpoint now; resolves `null` without a signer. */
  checkpoint(): Promise<AuditEventV02 | null>;
  /** Resolves when everything appended so far is durable. */
  flush(): Promise<void>;
  /** Flushes, writes a final checkpoint (when events were added since the last one) and closes. */
  close(): Promise<void>;
}

interface Pending {
  readonly kind: "event" | "checkpoint" | "final";
  readonly input: AuditEventInput;
  readonly timestamp: string;
  readonly resolve: (event: AuditEventV02 | null) => void;
  readonly reject: (err: unknown) => void;
}

interface SealedBatch {
  readonly lines: string[];
  readonly done: [Pending, AuditEventV02 | null][];
  /** The last checkpoint line of the batch, for the anchor. */
  readonly anchor: string | null;
  readonly position: ChainPosition;
}

const RESERVED = new Set(["checkpoint", "audit_recovered"]);

/**
 * Opens (creating 0600 in a 0700 directory) the append-only audit log at `path`. At open, under the
 * lock, a torn last line is moved to `<path>.torn-<time>` and recorded as an `audit_recovered` event;
 * a last line that does not hash to itself stops the open (`audit_log_corrupt`). Appends from every
 * process sharing the file are serialised by `<path>.lock`; each batch first reads what other
 * processes appended, so there is one chain.
 */
export async function openAuditLog(path: string, options: AuditLogOptions): Promise<AuditLog> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const handle = await openHandle(path, "a+", 0o600);
  const writer = new AuditWriter(path, handle, options);
  try {
    await writer.recoverAtOpen();
  } catch (err) {
    await handle.close();
    throw err;
  }
  return writer;
}

class AuditWriter implements AuditLog {
  readonly anchorPath: string;
  recovered: TornTail | null = null;
  private position: ChainPosition = EMPTY_POSITION;
  private readonly queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;
  private failure: unknown = null;
  /** When this writer last released the lock (ms): it waits {@link LOCK_HANDOVER_MS} before re-taking it. */
  private releasedAt = 0;
  private readonly redact: Redactor | null;
  private readonly ino: number;

  constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly options: AuditLogOptions,
  ) {
    this.anchorPath = anchorPathOf(path);
    this.redact =
      options.redaction === false && options.secrets === undefined
        ? null
        : createRedactor(options.redaction === false ? NO_PATTERNS : (options.redaction ?? DEFAULT_REDACTION), {
            ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
          });
    this.ino = fstatSync(handle.fd).ino;
  }

  async recoverAtOpen(): Promise<void> {
    await this.writeBatch([]);
  }

  append(input: AuditEventInput): Promise<AuditEventV02> {
    if (RESERVED.has(input.event_type)) {
      return Promise.reject(
        new AuditLogError(
          { code: "audit_event_reserved" },
          `event type \`${input.event_type}\` is written by the log itself`,
        ),
      );
    }
    const redacted = this.redact === null ? input : redactAuditInput(input, this.redact);
    return this.enqueue("event", redacted) as Promise<AuditEventV02>;
  }

  checkpoint(): Promise<AuditEventV02 | null> {
    return this.enqueue("checkpoint", { event_type: "checkpoint" });
  }

  async flush(): Promise<void> {
    while (this.draining !== null) await this.draining;
  }

  async close(): Promise<void> {
    if (this.closed) return this.flush();
    const final = this.enqueue("final", { event_type: "checkpoint" });
    this.closed = true;
    try {
      await final;
      await this.flush();
    } finally {
      await this.handle.close();
    }
  }

  private enqueue(kind: Pending["kind"], input: AuditEventInput): Promise<AuditEventV02 | null> {
    if (this.closed)
      return Promise.reject(new AuditLogError({ code: "audit_log_closed" }, `${this.path}: the audit log is closed`));
    if (this.failure !== null) return Promise.reject(this.failedError());
    const timestamp = this.timestamp();
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, input, timestamp, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const max = this.options.fsync === "batch" ? Math.max(1, this.options.maxBatch ?? 4096) : 1;
    try {
      while (this.queue.length > 0) {
        // hand the lock over: other processes sharing the log get their turn before our next batch
        const since = Date.now() - this.releasedAt;
        if (since < LOCK_HANDOVER_MS) await sleep(LOCK_HANDOVER_MS - since);
        await this.writeBatch(this.queue.splice(0, max));
      }
    } finally {
      this.draining = null;
    }
  }

  private lastMs = Number.NaN;
  private lastIso = "";

  /** The clock as ISO-8601; events within one millisecond share the string (no new formatting). */
  private timestamp(): string {
    const now = this.options.clock();
    const ms = now.getTime();
    if (ms !== this.lastMs) {
      this.lastIso = now.toISOString();
      this.lastMs = ms;
    }
    return this.lastIso;
  }

  private failedError(): AuditLogError {
    const why = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return new AuditLogError({ code: "audit_write_failed" }, `${this.path}: an earlier write or fsync failed: ${why}`);
  }

  /** Under the lock: catch up with other writers (recovering a torn tail), seal, write once, fsync once. */
  private async writeBatch(batch: Pending[]): Promise<void> {
    let release: (() => void) | undefined;
    try {
      release = await acquireFileLock(`${this.path}.lock`, this.options.lock);
      const prefix = this.catchUp();
      const plan = this.seal(prefix, batch);
      const bytes = plan.lines.length > 0 ? await this.writeDurably(plan.lines) : 0;
      this.position = { ...plan.position, size: this.position.size + bytes };
      if (plan.anchor !== null) writeAnchor(this.path, plan.anchor);
      for (const [item, event] of plan.done) item.resolve(event);
    } catch (err) {
      for (const item of batch) item.reject(err);
      if (batch.length === 0) throw err;
    } finally {
      if (release !== undefined) {
        release();
        this.releasedAt = Date.now();
      }
    }
  }

  private catchUp(): AuditEventInput[] {
    const stat = statSync(this.path, { throwIfNoEntry: false });
    if (stat?.ino !== this.ino) {
      throw new AuditLogError(
        { code: "audit_log_replaced" },
        `${this.path}: the log file was moved or replaced while open`,
      );
    }
    const scan = scanAuditLog(this.handle.fd, this.position, this.path);
    this.position = scan.position;
    if (scan.torn === null) return [];
    const tail = keepTornTailAside(this.handle.fd, this.path, scan.position, scan.torn, this.options.clock());
    this.recovered ??= tail;
    return [tornTailEvent(tail, scan.position)];
  }

  private seal(prefix: AuditEventInput[], batch: Pending[]): SealedBatch {
    let { count, head, sinceCheckpoint } = this.position;
    const lines: string[] = [];
    const done: [Pending, AuditEventV02 | null][] = [];
    let anchor: string | null = null;
    const randomId = this.options.randomId ?? randomUUID;
    const add = (input: AuditEventInput, timestamp: string): AuditEventV02 => {
      const sealed = sealAuditInput(input, { id: `ae_${randomId()}`, timestamp, previousEventHash: head });
      lines.push(sealed.line);
      count++;
      head = sealed.event.event_hash;
      if (input.event_type === "checkpoint") {
        sinceCheckpoint = 0;
        anchor = sealed.line;
      } else sinceCheckpoint++;
      return sealed.event;
    };
    const checkpoint = (): AuditEventV02 | null => {
      const signer = this.options.signer;
      if (signer === undefined) return null;
      const timestamp = this.timestamp();
      const body = createCheckpointBody(head, count, timestamp);
      return add(createCheckpointInput({ body, signature: signCheckpoint(body, signer) }), timestamp);
    };
    const every = Math.max(1, this.options.checkpointEvery ?? 1000);
    for (const input of prefix) add(input, this.timestamp());
    for (const item of batch) {
      try {
        if (item.kind === "event") done.push([item, add(item.input, item.timestamp)]);
        else done.push([item, item.kind === "final" && sinceCheckpoint === 0 ? null : checkpoint()]);
      } catch (err) {
        item.reject(err);
        continue;
      }
      if (sinceCheckpoint >= every) checkpoint();
    }
    return { lines, done, anchor, position: { size: this.position.size, count, head, sinceCheckpoint } };
  }

  /** Writes the lines with one write and one fsync; returns the bytes written. */
  private async writeDurably(lines: string[]): Promise<number> {
    const data = linesToBuffer(lines);
    try {
      for (let offset = 0; offset < data.length;) {
        const { bytesWritten } = await this.handle.write(data, offset, data.length - offset);
        offset += bytesWritten;
      }
      await this.handle.datasync();
      return data.length;
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }
}

/**
 * The lines, each followed by a newline, as UTF-8 bytes: encoded one by one into one buffer sized for
 * the worst case (3 bytes per UTF-16 unit), so the batch never exists as one joined string as well.
 */
function linesToBuffer(lines: readonly string[]): Buffer {
  let units = 0;
  for (const line of lines) units += line.length + 1;
  const buffer = Buffer.allocUnsafe(units * 3);
  let offset = 0;
  for (const line of lines) {
    offset += buffer.write(line, offset, "utf8");
    buffer[offset++] = 0x0a;
  }
  return buffer.subarray(0, offset);
}
