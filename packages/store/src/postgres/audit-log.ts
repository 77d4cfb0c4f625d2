import { randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import {
  createAuditEventBody,
  createCheckpointBody,
  createCheckpointInput,
  createRedactor,
  DEFAULT_REDACTION,
  fitAuditInput,
  isAuditEventType,
  MAX_AUDIT_LINE_LENGTH,
  NO_PATTERNS,
  redactAuditInput,
  sealAuditLine,
  signCheckpoint,
  type AuditEventInput,
  type AuditEventV02,
  type CheckpointSigner,
  type RedactionRules,
  type Redactor,
} from "@acp/core";
import { AuditLogError } from "../audit/index.js";
import type { PostgresAuditAnchor } from "./audit-anchor.js";
import type { PostgresStore } from "./open-postgres-store.js";
import { PostgresStoreError } from "./postgres-store-error.js";
import { ADVISORY_LOCK } from "./schema.js";

/** Options of {@link createPostgresAuditLog} (the file log's, less what only a file has). */
export interface PostgresAuditLogOptions {
  /** Signs checkpoints; without it no checkpoint is written. */
  readonly signer?: CheckpointSigner;
  /** A signed checkpoint after this many events in the chain (all nodes together; default 1000), and at `close()`. */
  readonly checkpointEvery?: number;
  /** Redaction rules applied before hashing (default {@link DEFAULT_REDACTION}); `false` turns it off. */
  readonly redaction?: RedactionRules | false;
  /**
   * Known secret values (the vault entries in use), redacted wherever they appear, also when
   * `redaction` is `false`; read on every append. As the file log's option of the same name.
   */
  readonly secrets?: () => readonly string[];
  /** The clock for event and checkpoint timestamps. */
  readonly clock: () => Date;
  /** Unique part of event ids (`ae_<this>`); default a random UUID. */
  readonly randomId?: () => string;
  /** Most events committed in one transaction (default 1024). */
  readonly maxBatch?: number;
  /**
   * Append without the lock when this log wrote the chain's head last: one `INSERT` (one round trip)
   * chained to the head it remembers. If another node appended meanwhile, the `seq` primary key refuses
   * the whole insert and the batch goes the locked way; after such a clash the log stays on the locked
   * way for a second. Default false.
   */
  readonly optimistic?: boolean;
  /**
   * This node's anchor ({@link openPostgresAuditAnchor}): before a batch with a checkpoint is committed, in
   * its transaction, the table must still hold the anchor's checkpoint row and link to it
   * (`audit_anchor_mismatch` otherwise, and the whole batch rejects); the checkpoint written becomes the anchor.
   */
  readonly anchor?: PostgresAuditAnchor;
}

/** The audit chain in PostgreSQL, appended by every node into one chain. */
export interface PostgresAuditLog {
  /** Redacts, hashes, chains and commits one event; resolves with the event as stored. */
  append(input: AuditEventInput): Promise<AuditEventV02>;
  /** Appends a signed checkpoint now; resolves `null` without a signer. */
  checkpoint(): Promise<AuditEventV02 | null>;
  /** Resolves when everything appended so far is committed (or has failed). */
  flush(): Promise<void>;
  /**
   * Flushes and appends a final checkpoint when the chain has events after its last one; with an anchor and
   * no final checkpoint (the chain ends with one already, another node's too), adopts that one. Leaves the
   * store open.
   */
  close(): Promise<void>;
}

interface Queued {
  readonly kind: "event" | "checkpoint" | "final";
  readonly input: AuditEventInput;
  readonly timestamp: string;
  readonly resolve: (event: AuditEventV02 | null) => void;
  readonly reject: (err: unknown) => void;
}

interface Head {
  seq: number;
  hash: string | null;
  sinceCheckpoint: number;
}

interface Row {
  readonly seq: number;
  readonly event: AuditEventV02;
  readonly line: string;
  readonly sinceCheckpoint: number;
}

interface SealedBatch {
  readonly rows: Row[];
  readonly done: [Queued, AuditEventV02 | null][];
}

const RESERVED = new Set(["checkpoint", "audit_recovered"]);

/** PostgreSQL's unique_violation: the `seq` (or hash) another writer took first. */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "23505";
}

const INSERT = `INSERT INTO acp_audit_events
  (seq, event_hash, previous_event_hash, since_checkpoint, event_type, request_id, timestamp, line)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])`;

async function readHead(client: PoolClient): Promise<Head> {
  const found = await client.query<{ seq: number; event_hash: string; since_checkpoint: number }>(
    "SELECT seq, event_hash, since_checkpoint FROM acp_audit_events ORDER BY seq DESC LIMIT 1",
  );
  const row = found.rows[0];
  return row === undefined
    ? { seq: 0, hash: null, sinceCheckpoint: 0 }
    : { seq: row.seq, hash: row.event_hash, sinceCheckpoint: row.since_checkpoint };
}

/** Runs one statement: on a pooled connection in a transaction, or on the store itself (autocommit). */
type RunQuery = (text: string, values: unknown[]) => Promise<unknown>;

async function insertRows(run: RunQuery, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  await run(INSERT, [
    rows.map((r) => r.seq),
    rows.map((r) => r.event.event_hash),
    rows.map((r) => r.event.previous_event_hash),
    rows.map((r) => r.sinceCheckpoint),
    rows.map((r) => r.event.event_type),
    rows.map((r) => r.event.request_id),
    rows.map((r) => r.event.timestamp),
    rows.map((r) => r.line),
  ]);
}

/** The lines of one batch, chained to `head` (which it advances), with the checkpoints due. */
function sealBatch(head: Head, batch: readonly Queued[], options: PostgresAuditLogOptions): SealedBatch {
  const every = Math.max(1, options.checkpointEvery ?? 1000);
  const rows: Row[] = [];
  const done: [Queued, AuditEventV02 | null][] = [];
  const add = (input: AuditEventInput, timestamp: string): AuditEventV02 => {
    const id = `ae_${(options.randomId ?? randomUUID)()}`;
    const placement = { id, timestamp, previousEventHash: head.hash };
    let sealed = sealAuditLine(createAuditEventBody(input, placement));
    if (sealed.line.length > MAX_AUDIT_LINE_LENGTH) {
      // too long to verify: its longest values give way to their length and digest (as in audit.jsonl)
      sealed = sealAuditLine(createAuditEventBody(fitAuditInput(input), placement));
      if (sealed.line.length > MAX_AUDIT_LINE_LENGTH) {
        throw new RangeError(
          `audit: an event longer than ${MAX_AUDIT_LINE_LENGTH} characters even with its long values omitted`,
        );
      }
    }
    head.seq += 1;
    head.hash = sealed.event.event_hash;
    head.sinceCheckpoint = input.event_type === "checkpoint" ? 0 : head.sinceCheckpoint + 1;
    rows.push({ seq: head.seq, event: sealed.event, line: sealed.line, sinceCheckpoint: head.sinceCheckpoint });
    return sealed.event;
  };
  const checkpoint = (): AuditEventV02 | null => {
    if (options.signer === undefined) return null;
    const timestamp = options.clock().toISOString();
    const body = createCheckpointBody(head.hash, head.seq, timestamp);
    return add(createCheckpointInput({ body, signature: signCheckpoint(body, options.signer) }), timestamp);
  };
  for (const item of batch) {
    try {
      if (item.kind === "event") done.push([item, add(item.input, item.timestamp)]);
      else done.push([item, item.kind === "final" && head.sinceCheckpoint === 0 ? null : checkpoint()]);
    } catch (err) {
      item.reject(err);
      continue;
    }
    if (head.sinceCheckpoint >= every) checkpoint();
  }
  return { rows, done };
}

/**
 * An audit log whose chain lives in PostgreSQL and is shared by every node: each batch of appends is one
 * transaction that takes `pg_advisory_xact_lock`, reads the head, and inserts the lines chained to it,
 * so appends from all nodes form ONE chain that {@link verifyAuditChain} accepts (export it with
 * `readPostgresAuditLines`). Lines are the same RFC 8785 canonical JSON as `audit.jsonl`. A failed
 * transaction rolls back whole: the appends in it reject (the caller refuses) and the chain is intact.
 */
export function createPostgresAuditLog(store: PostgresStore, options: PostgresAuditLogOptions): PostgresAuditLog {
  const redact: Redactor | null =
    options.redaction === false && options.secrets === undefined
      ? null
      : createRedactor(options.redaction === false ? NO_PATTERNS : (options.redaction ?? DEFAULT_REDACTION), {
          ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
        });
  const maxBatch = Math.max(1, options.maxBatch ?? 1024);
  const queue: Queued[] = [];
  let draining: Promise<void> | null = null;
  let closed = false;

  /** The head this log wrote last (optimistic mode), and until when not to trust it after a clash. */
  let known: Head | null = null;
  let lockedUntilMs = 0;
  const anchor = options.signer !== undefined ? options.anchor : undefined;
  const every = Math.max(1, options.checkpointEvery ?? 1000);
  /** Events after the last checkpoint when this log last wrote (a hint of whether a batch will sign one). */
  let lastSince = 0;
  const mayCheckpoint = (batch: readonly Queued[]): boolean =>
    anchor !== undefined && (batch.some((q) => q.kind !== "event") || lastSince + batch.length >= every);

  const lockedWrite = async (batch: Queued[]): Promise<SealedBatch["done"]> => {
    // catch up with the chain before taking the lock, so the check under it reads only the last rows
    if (anchor !== undefined && mayCheckpoint(batch)) await anchor.sync((text, values) => store.query(text, values));
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await store.transaction(async (client) => {
          await client.query("SELECT pg_advisory_xact_lock($1, 0)", [ADVISORY_LOCK.audit]);
          const head = await readHead(client);
          const plan = sealBatch(head, batch, options);
          const signed = plan.rows.filter((r) => r.event.event_type === "checkpoint").at(-1);
          // the rows this checkpoint signs over must still hold and link to this node's signed past
          if (anchor !== undefined && signed !== undefined)
            await anchor.sync((text, values) => client.query(text, values));
          await insertRows((text, values) => client.query(text, values), plan.rows);
          known = options.optimistic === true ? head : null;
          lastSince = head.sinceCheckpoint;
          return { done: plan.done, signed };
        });
        if (anchor !== undefined && written.signed !== undefined) anchor.wrote(written.signed.seq, written.signed.line);
        return written.done;
      } catch (err) {
        known = null;
        // an optimistic writer of another node took the next seq between our read and insert: read again
        if (!isUniqueViolation(err) || attempt >= 5) throw err;
      }
    }
  };

  const optimisticWrite = async (batch: Queued[]): Promise<SealedBatch["done"] | null> => {
    if (known === null || Date.now() < lockedUntilMs) return null;
    // a batch that may sign a checkpoint goes the locked way, where the anchor is checked
    if (
      anchor !== undefined &&
      (batch.some((q) => q.kind !== "event") || known.sinceCheckpoint + batch.length >= every)
    )
      return null;
    const head = { ...known };
    known = null;
    const plan = sealBatch(head, batch, options);
    if (anchor !== undefined && plan.rows.some((r) => r.event.event_type === "checkpoint")) return null;
    try {
      await insertRows((text, values) => store.query(text, values), plan.rows);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      lockedUntilMs = Date.now() + 1000;
      return null;
    }
    known = head;
    lastSince = head.sinceCheckpoint;
    return plan.done;
  };

  const writeBatch = async (batch: Queued[]): Promise<void> => {
    try {
      anchor?.check();
      const done = (await optimisticWrite(batch)) ?? (await lockedWrite(batch));
      for (const [item, event] of done) item.resolve(event);
    } catch (err) {
      for (const item of batch) item.reject(err);
    }
  };

  const drain = async (): Promise<void> => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (queue.length > 0) await writeBatch(queue.splice(0, maxBatch));
    } finally {
      draining = null;
    }
  };

  const enqueue = (kind: Queued["kind"], input: AuditEventInput): Promise<AuditEventV02 | null> => {
    if (closed)
      return Promise.reject(new AuditLogError({ code: "audit_log_closed" }, `${store.url}: the audit log is closed`));
    const timestamp = options.clock().toISOString();
    return new Promise((resolve, reject) => {
      queue.push({ kind, input, timestamp, resolve, reject });
      draining ??= drain();
    });
  };

  const flush = async (): Promise<void> => {
    while (draining !== null) await draining;
  };

  return {
    append(input) {
      if (!isAuditEventType(input.event_type)) {
        const message = `audit: unknown event type \`${String(input.event_type)}\``;
        return Promise.reject(new PostgresStoreError("postgres_input_invalid", message));
      }
      if (RESERVED.has(input.event_type)) {
        const message = `event type \`${input.event_type}\` is written by the log itself`;
        return Promise.reject(new AuditLogError({ code: "audit_event_reserved" }, message));
      }
      const redacted = redact === null ? input : redactAuditInput(input, redact);
      return enqueue("event", redacted) as Promise<AuditEventV02>;
    },
    checkpoint: () => enqueue("checkpoint", { event_type: "checkpoint" }),
    flush,
    async close() {
      if (closed) return flush();
      const final = enqueue("final", { event_type: "checkpoint" });
      closed = true;
      const written = await final;
      await flush();
      // no final checkpoint: the chain already ends with one, maybe another node's committed after this
      // node last looked (nodes stopped together): hold it, or the next start finds no anchor to hold
      if (written === null && anchor !== undefined) await anchor.sync((text, values) => store.query(text, values));
    },
  };
}
