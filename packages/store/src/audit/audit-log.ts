import { fstatSync, mkdirSync, statSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  AuditLineStager,
  createRedactor,
  DEFAULT_REDACTION,
  NO_PATTERNS,
  createStagedAuditLines,
  redactAuditInput,
  type AuditEventInput,
  type AuditEventV02,
  type AuditIdBytes,
  type CheckpointPublicKey,
  type StagedAuditLines,
  type Redactor,
} from "@acp/core";
import { anchorPathOf, beginAnchor } from "./anchor.js";
import { AnchorGuard } from "./anchor-guard.js";
import type { AppendOptions, AuditLog, AuditLogOptions } from "./audit-log-api.js";
import { writeAll } from "./byte-runs.js";
import { createEventIdBytes, createEventIds } from "./event-ids.js";
import { abandonBatch, takeBatch, type Pending, type Slice } from "./batch-queue.js";
import { joinPlans, unsealSlices, type SealedBatch } from "./sealed-batch.js";
import { CommitDelay } from "./commit-delay.js";
import { FileLock, LOCK_HANDOVER_MS } from "./file-lock.js";
import { AuditLogError } from "./audit-log-error.js";
import { openLogFile } from "./open-log-file.js";
import { EMPTY_POSITION, scanAuditLog, type ChainPosition } from "./scan-log.js";
import { sealBatch, type Sealer } from "./seal-batch.js";
import { keepTornTailAside, tornTailEvent, type TornTail } from "./torn-tail.js";
import { publicKeyOf, verifyUnanchoredLog, type AdoptedCheckpoint, type Reanchored } from "./unanchored-log.js";

export type { AppendOptions, AuditFsyncMode, AuditLog, AuditLogOptions } from "./audit-log-api.js";

/** The next batch, taken off the queue and sealed while the one before was being fsynced. */
interface Ahead {
  readonly batch: Slice[];
  /** Sealed as if it follows `from`; `null` when sealing failed (it is sealed again, under the lock). */
  readonly plan: SealedBatch | null;
  readonly from: ChainPosition;
}

const RESERVED = new Set(["checkpoint", "audit_recovered"]);

/** Events sealed ahead per step (about a millisecond of CPU) before the event loop gets a turn. */
const AHEAD_STEP = 512;

const NO_LINES: StagedAuditLines = createStagedAuditLines();

/** Whether a chain position is `expected` (same end and head): nothing was appended since. */
function samePosition(expected: ChainPosition | undefined, now: ChainPosition): boolean {
  return expected !== undefined && expected.size === now.size && expected.head === now.head;
}

/** A thrown value as a rejected promise (an Error, as thrown by redaction and canonicalization). */
function rejection(err: unknown): Promise<never> {
  return Promise.reject(err instanceof Error ? err : new Error(String(err)));
}

function reserved(input: AuditEventInput): AuditLogError {
  return new AuditLogError(
    { code: "audit_event_reserved" },
    `event type \`${input.event_type}\` is written by the log itself`,
  );
}

/** The key the anchor's checkpoint is checked with at open: the signer's, unless it lives only as long as this process. */
function anchorKeyOf(options: AuditLogOptions): CheckpointPublicKey | undefined {
  if (options.signer === undefined || options.ephemeralSigner === true) return undefined;
  return publicKeyOf(options.signer, options.publicKey);
}

/**
 * Opens (creating 0600 in a 0700 directory) the append-only audit log at `path`. At open, under the
 * lock, a torn last line is moved to `<path>.torn-<time>` and recorded as an `audit_recovered` event;
 * a last line that does not hash to itself stops the open (`audit_log_corrupt`), and so does a log that does
 * not hold the anchor's checkpoint at its line, or whose anchor another key signed (`audit_anchor_mismatch`, see
 * {@link AnchorGuard}). A writer
 * with a signer that finds signed checkpoints and no anchor first verifies the whole log with the key and
 * anchors it at its last checkpoint, or refuses it (`audit_anchor_missing`, see {@link verifyUnanchoredLog}). Appends from every
 * process sharing the file are serialised by `<path>.lock`; each batch first reads what other
 * processes appended, so there is one chain.
 */
export async function openAuditLog(path: string, options: AuditLogOptions): Promise<AuditLog> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const handle = await openLogFile(path);
  let adopted: AdoptedCheckpoint | null;
  try {
    // a writer that signs checks a log without an anchor before it extends it (verified in full)
    adopted =
      options.signer === undefined
        ? null
        : await verifyUnanchoredLog(path, handle.fd, publicKeyOf(options.signer, options.publicKey));
  } catch (err) {
    await handle.close();
    throw err;
  }
  const writer = new AuditWriter(path, handle, options, adopted);
  try {
    await writer.recoverAtOpen();
  } catch (err) {
    writer.lock.close();
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
  /** `ae_<unique>` event ids. */
  private readonly newId: () => string;
  /** The same ids written straight into staged lines (`appendMany`), or `null` with `randomId`. */
  private readonly idBytes: AuditIdBytes | null;
  /** Most events per write; `every` mode also writes one call per write. */
  private readonly maxBatch: number;
  private readonly every: boolean;
  /** Stages every line this writer writes (events when appended, its own when sealed). */
  private readonly stager = new AuditLineStager();
  /** `batch` mode: the next batch, sealed during the current one's fsync (see {@link sealAhead}). */
  private ahead: Ahead | null = null;
  /** The sealing of {@link ahead} while it runs (it yields to the event loop between steps). */
  private sealing: Promise<void> | null = null;
  /** `<path>.lock`, taken once per batch. */
  readonly lock: FileLock;
  /** The signed past the log must still hold before it is extended (and signed again). */
  private readonly guard: AnchorGuard;
  /** `batch` mode: how long a commit waits for company (see {@link AuditLogOptions.commitDelayMs}). */
  private readonly delay: CommitDelay;
  /**
   * Whether the last catch-up found lines of other processes: the next batch is then not sealed ahead
   * (it would most likely have to be unsealed and sealed again after their next lines).
   */
  private shared = false;
  /** What {@link sealBatch} needs of this writer. */
  private readonly sealer: Sealer;

  constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly options: AuditLogOptions,
    adopted: AdoptedCheckpoint | null = null,
  ) {
    this.anchorPath = anchorPathOf(path);
    this.lock = new FileLock(`${path}.lock`, options.lock);
    this.redact =
      options.redaction === false && options.secrets === undefined
        ? null
        : createRedactor(options.redaction === false ? NO_PATTERNS : (options.redaction ?? DEFAULT_REDACTION), {
            ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
          });
    this.ino = fstatSync(handle.fd).ino;
    this.guard = new AnchorGuard(path, handle.fd, adopted, anchorKeyOf(options));
    this.newId = createEventIds(options.randomId);
    this.idBytes = options.randomId === undefined ? createEventIdBytes() : null;
    this.maxBatch = Math.max(1, options.maxBatch ?? 4096);
    this.every = options.fsync !== "batch";
    this.delay = new CommitDelay(this.every ? 0 : Math.max(0, options.commitDelayMs ?? 0));
    this.sealer = {
      newId: this.newId,
      stager: this.stager,
      timestamp: () => this.timestamp(),
      signer: options.signer,
      checkpointEvery: options.checkpointEvery,
    };
  }

  async recoverAtOpen(): Promise<void> {
    await this.writeBatch([]);
  }

  get reanchored(): Reanchored | null {
    return this.guard.reanchored;
  }

  append(input: AuditEventInput, options?: AppendOptions): Promise<AuditEventV02> {
    if (RESERVED.has(input.event_type)) return Promise.reject(reserved(input));
    const refusal = this.refusal();
    if (refusal !== null) return refusal;
    const timestamp = this.timestamp();
    const lines = createStagedAuditLines();
    let single: Pending["single"];
    try {
      const redacted = this.redact === null ? input : redactAuditInput(input, this.redact);
      const ids = this.idBytes;
      // (the input staged: `redacted`, or its fitted form when its line would be too long to verify)
      if (ids === null) {
        const id = this.newId();
        single = { input: this.stager.stage(redacted, id, timestamp, lines), id };
      } else {
        // the id written in place from the pool, then read back for the event `append` resolves with
        const staged = this.stager.stage(redacted, ids, timestamp, lines);
        single = { input: staged, id: this.stager.stagedId(ids) };
      }
    } catch (err) {
      return rejection(err);
    }
    return this.enqueue("events", lines, 1, single, timestamp, options?.urgent === true) as Promise<AuditEventV02>;
  }

  appendMany(inputs: readonly AuditEventInput[]): Promise<void> {
    for (const input of inputs) if (RESERVED.has(input.event_type)) return Promise.reject(reserved(input));
    const refusal = this.refusal();
    if (refusal !== null) return refusal;
    if (inputs.length === 0) return Promise.resolve();
    const timestamp = this.timestamp();
    const lines = createStagedAuditLines();
    try {
      const ids = this.idBytes;
      for (const input of inputs) {
        const redacted = this.redact === null ? input : redactAuditInput(input, this.redact);
        this.stager.stage(redacted, ids ?? this.newId(), timestamp, lines);
      }
    } catch (err) {
      return rejection(err);
    }
    return this.enqueue("events", lines, inputs.length, null, timestamp, false) as Promise<void>;
  }

  checkpoint(): Promise<AuditEventV02 | null> {
    return (
      this.refusal() ??
      (this.enqueue("checkpoint", NO_LINES, 0, null, this.timestamp(), true) as Promise<AuditEventV02 | null>)
    );
  }

  async flush(): Promise<void> {
    this.delay.flushing();
    try {
      while (this.draining !== null) await this.draining;
    } finally {
      this.delay.flushEnded(this.queue);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return this.flush();
    const final = this.refusal() ?? this.enqueue("final", NO_LINES, 0, null, this.timestamp(), true);
    this.closed = true;
    try {
      await final;
      await this.flush();
    } finally {
      this.lock.close();
      await this.handle.close();
    }
  }

  /** Why the log takes nothing more (closed, or poisoned by a failed write), as a rejection; else null. */
  private refusal(): Promise<never> | null {
    if (this.closed)
      return Promise.reject(new AuditLogError({ code: "audit_log_closed" }, `${this.path}: the audit log is closed`));
    if (this.failure !== null) return Promise.reject(this.failedError());
    return null;
  }

  private enqueue(
    kind: Pending["kind"],
    lines: StagedAuditLines,
    count: number,
    single: Pending["single"],
    timestamp: string,
    urgent: boolean,
  ): Promise<AuditEventV02 | null | undefined> {
    return new Promise((resolve, reject) => {
      const queuedAt = this.delay.stamp();
      this.queue.push({ kind, lines, count, single, timestamp, queuedAt, urgent, taken: 0, resolve, reject });
      this.delay.queued(count, urgent);
      this.draining ??= this.drain();
    });
  }

  /** Takes the next batch off the queue. */
  private takeNext(): Slice[] {
    const batch = takeBatch(this.queue, this.maxBatch, this.every);
    this.delay.calmDown(this.queue);
    return batch;
  }

  private async drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0 || this.ahead !== null || this.sealing !== null) {
        // hand the lock over: other processes sharing the log get their turn before our next batch
        const since = Date.now() - this.releasedAt;
        if (since < LOCK_HANDOVER_MS) await sleep(LOCK_HANDOVER_MS - since);
        while (this.sealing !== null) await this.sealing;
        await this.delay.wait(this.queue);
        const ahead = this.ahead;
        this.ahead = null;
        if (ahead === null && this.queue.length === 0) continue;
        await this.writeBatch(ahead?.batch ?? this.takeNext(), ahead);
      }
    } finally {
      this.draining = null;
      this.delay.calmDown(this.queue);
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

  /**
   * Under the lock: catch up with other writers (recovering a torn tail), seal, write once, fsync once.
   * A batch sealed ahead (`ahead`) is written as sealed when the log still ends where that sealing
   * assumed (no other process appended, no torn tail); otherwise it is unsealed and sealed again here.
   */
  private async writeBatch(batch: Slice[], ahead: Ahead | null = null): Promise<void> {
    let release: (() => void) | undefined;
    try {
      if (this.failure !== null) throw this.failedError();
      release = await this.lock.acquire();
      const prefix = this.catchUp();
      let plan: SealedBatch;
      const sealed = ahead?.plan ?? null;
      if (sealed !== null && prefix.length === 0 && samePosition(ahead?.from, this.position)) plan = sealed;
      else {
        if (sealed !== null) unsealSlices(batch, Number.POSITIVE_INFINITY);
        plan = this.seal(prefix, batch, this.position);
      }
      // the anchor's temporary file is written while the log's write and fsync are in flight; it is
      // renamed into place only after the log's fsync returned
      const anchor = plan.anchor === null ? null : beginAnchor(this.path, plan.anchor);
      let bytes = 0;
      try {
        if (plan.chunks.length > 0) {
          const start = this.position.size;
          bytes = await this.writeDurably(plan.chunks, (written) => {
            // (with a commit delay the next commit takes everything queued when it starts instead)
            if (!this.every && !this.shared && this.delay.delayMs === 0 && this.queue.length > 0) {
              this.sealing = this.sealAhead({ ...plan.position, size: start + written }).finally(() => {
                this.sealing = null;
              });
            }
          });
        }
      } catch (err) {
        await anchor?.abandon();
        throw err;
      }
      if (plan.anchor !== null) this.guard.wrote(this.position.size, plan.chunks, plan.anchor);
      this.position = { ...plan.position, size: this.position.size + bytes };
      await anchor?.commit();
      for (const [item, event] of plan.done) item.resolve(event);
    } catch (err) {
      abandonBatch(this.queue, batch, err);
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
    // at open, the anchor's checkpoint must be at its line; later, the last one known still where it was
    const opening = this.position === EMPTY_POSITION;
    if (!opening) this.guard.check();
    const scan = scanAuditLog(
      this.handle.fd,
      this.position,
      this.path,
      opening ? this.guard.expectAtOpen() : undefined,
    );
    if (opening) this.guard.settleOpen(scan);
    this.shared = scan.position.size !== this.position.size;
    this.position = scan.position;
    if (scan.torn === null) return [];
    const tail = keepTornTailAside(this.handle.fd, this.path, scan.position, scan.torn, this.options.clock());
    this.recovered ??= tail;
    return [tornTailEvent(tail, scan.position)];
  }

  /**
   * `batch` mode, from when the current batch's `fdatasync` is under way (the CPU would otherwise wait
   * on the disk) until done: takes the next batch (up to `maxBatch` events) off the queue and seals it
   * as if it follows `from`, where the current batch ends, in steps of {@link AHEAD_STEP} events with a
   * turn of the event loop between them, so I/O completions, the current batch's callers and producers
   * are not held up. Nothing is written; {@link writeBatch} checks the assumption under the lock. If
   * sealing throws, what was sealed is unsealed and the batch is sealed again under the lock.
   */
  private async sealAhead(from: ChainPosition): Promise<void> {
    const batch: Slice[] = [];
    const plans: SealedBatch[] = [];
    let position = from;
    let room = this.maxBatch;
    let failed = false;
    try {
      while (room > 0 && this.queue.length > 0 && this.failure === null) {
        const part = takeBatch(this.queue, Math.min(room, AHEAD_STEP), false);
        batch.push(...part);
        for (const { from: first, to } of part) room -= to - first;
        if (!failed) {
          try {
            const plan = this.seal([], part, position);
            plans.push(plan);
            position = plan.position;
          } catch {
            failed = true;
            unsealSlices(batch.slice(0, batch.length - part.length), Number.POSITIVE_INFINITY);
          }
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.ahead = batch.length === 0 ? null : { batch, plan: failed ? null : joinPlans(plans, from), from };
    }
  }

  /**
   * Seals the batch's lines where they were staged, checkpoints included, chained after `from`;
   * nothing is written yet. If it throws, the lines it sealed are unsealed again.
   */
  private seal(prefix: AuditEventInput[], batch: Slice[], from: ChainPosition): SealedBatch {
    return sealBatch(this.sealer, prefix, batch, from);
  }

  /**
   * Writes the chunks in order and fsyncs once; a failure poisons the log. Returns the bytes written.
   * `whileSyncing` runs once the `fdatasync` is under way (it must not throw).
   */
  private async writeDurably(chunks: Buffer[], whileSyncing: (written: number) => void): Promise<number> {
    try {
      const bytes = await writeAll(this.handle, chunks);
      const synced = this.handle.datasync();
      whileSyncing(bytes);
      await synced;
      return bytes;
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }
}
