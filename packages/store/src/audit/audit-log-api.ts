import type { AuditEventInput, AuditEventV02, CheckpointPublicKey, CheckpointSigner, RedactionRules } from "@acp/core";
import type { FileLockOptions } from "./file-lock.js";
import type { TornTail } from "./torn-tail.js";
import type { Reanchored } from "./unanchored-log.js";

// The audit log's contract: what `openAuditLog` takes and what the open log offers.

/**
 * `every`: each call (`append`, or one `appendMany`) is written and fsynced on its own before it resolves.
 * `batch`: group commit, one write and one fsync per batch of up to `maxBatch` queued events.
 */
export type AuditFsyncMode = "every" | "batch";

/** Options of {@link openAuditLog}. */
export interface AuditLogOptions {
  /** Default `every`. */
  readonly fsync?: AuditFsyncMode;
  /** Signs checkpoints; without it no checkpoint is written. */
  readonly signer?: CheckpointSigner;
  /**
   * The signer's public key, to verify a log found with signed checkpoints and no anchor before it is
   * extended, and the anchor's checkpoint of a log found with one (`audit_anchor_mismatch` when another key
   * signed it); default the public half of a `KeyObject` signer. With a signer function and none, a log
   * without an anchor is refused (`audit_anchor_missing`) and an anchor's signature is not checked.
   */
  readonly publicKey?: CheckpointPublicKey;
  /**
   * The signer's key lives only as long as this process (`acp serve` on a home without keys): the anchor
   * beside the log was signed by an earlier process's key, so its signature is not checked at open (only
   * that the log holds its line). Default `false`.
   */
  readonly ephemeralSigner?: boolean;
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
  /**
   * `batch` mode: how long a group commit waits for company (ms, default 0: it starts on the next turn
   * of the event loop). A commit then starts once the oldest event it takes has waited this long, or
   * at once when an urgent `append`, a checkpoint, `flush` or `close` is waiting, or when
   * `COMMIT_AT_EVENTS` (commit-delay.ts) events are queued; it takes everything queued by then. More events share
   * each lock, write and `fdatasync`; an event whose caller does not wait can stay in memory that much
   * longer. The bound: an event appended at t is in the commit that starts at the latest at
   * t + `commitDelayMs` (or, when a commit is still in flight then, {@link LOCK_HANDOVER_MS} after it
   * ends), and durable when that commit's `fdatasync` returns; so a crash loses at most the events
   * appended in the last `commitDelayMs` plus one commit's time (lock wait, write, fsync), more only
   * when the disk or the lock held commits up. Nothing is sealed ahead with a delay.
   */
  readonly commitDelayMs?: number;
  readonly lock?: FileLockOptions;
}

/** Options of one {@link AuditLog.append}. */
export interface AppendOptions {
  /** Commit without waiting for the commit delay (the caller waits until the event is durable). */
  readonly urgent?: boolean;
}

/** An open, append-only audit log. */
export interface AuditLog {
  readonly path: string;
  /** `<path>.checkpoint`: the latest signed checkpoint, kept beside the log. */
  readonly anchorPath: string;
  /** The torn tail recovered when the log was opened, if there was one. */
  readonly recovered: TornTail | null;
  /**
   * When the log was found with signed checkpoints and no anchor, verified in full with the key and
   * anchored again at its last checkpoint at open: which, and how many lines followed it unsigned.
   */
  readonly reanchored: Reanchored | null;
  /**
   * Redacts, hashes, chains and durably appends one event; resolves with the event as written. With
   * `urgent`, the commit that takes it does not wait for `commitDelayMs` (its caller is waiting).
   */
  append(input: AuditEventInput, options?: AppendOptions): Promise<AuditEventV02>;
  /**
   * Redacts, hashes, chains and durably appends several events, in order, with one promise that
   * resolves when all of them are durable (the producer's batch path: no promise or event object per
   * event). The events share one timestamp (the clock is read once). Refuses the whole call, with
   * nothing queued, when any input is a reserved event type or not JSON. A call larger than `maxBatch`
   * is written in several groups; if one of them fails the call rejects and the groups before it stay.
   */
  appendMany(inputs: readonly AuditEventInput[]): Promise<void>;
  /** Writes a signed checkpoint now; resolves `null` without a signer. */
  checkpoint(): Promise<AuditEventV02 | null>;
  /** Resolves when everything appended so far is durable. */
  flush(): Promise<void>;
  /** Flushes, writes a final checkpoint (when events were added since the last one) and closes. */
  close(): Promise<void>;
}
