/**
 * The stores on PostgreSQL (`storage.url: postgres://…`), shared by every node on the database:
 * pending consent (answers reach the waiting node through LISTEN/NOTIFY), spent nonces, rate-limit
 * windows, console links and sessions, and one audit chain appended under one serialised transaction.
 */
import {
  readCheckpoint,
  verifyCheckpointSignature,
  type AuditEventV02,
  type CheckpointPublicKey,
  type CheckpointSigner,
  type RedactionRules,
} from "@acp/core";
import {
  createPostgresAuditLog,
  createPostgresConsentGrantStore,
  createNonceAttestationLedger,
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresProposalLedger,
  createPostgresRateLimiter,
  describePostgresDatabase,
  MAX_CLOCK_SKEW_MS,
  openConsentWaiter,
  openPostgresAuditAnchor,
  resolvePostgresAuditAnchorPath,
  MAX_AUDIT_ROW_BYTES,
  overlongAuditRow,
  postgresFirstAnchorMessage,
  postgresFirstAnchorStartMessage,
  openPostgresStore,
  PostgresStoreError,
  type AsyncPendingConsentStore,
  type PostgresAnchorDatabaseChange,
  type PostgresAuditAnchor,
  type PostgresStore,
} from "@acp/store";
import type { ServerStores } from "../types.js";
import { createPostgresAuditTrail } from "./audit-trail.js";
import { createPostgresConsoleAuthStore } from "./console-auth.js";
import { SERVER_POSTGRES_MIGRATIONS } from "./migrations.js";
import { openNotifiedChangeFeed } from "./notified-change-feed.js";
import { guardClockSkew, type ClockSkewGuard } from "./clock-skew-guard.js";

/** What {@link openPostgresStores} needs. */
export interface PostgresStoresOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string;
  readonly clock: () => Date;
  readonly auditSigner?: CheckpointSigner;
  readonly auditPublicKey?: CheckpointPublicKey;
  /**
   * The node's ACP home: with a signer and a public key, the node keeps its anchor on the chain there
   * (`audit-postgres-<id>.checkpoint`, the latest signed checkpoint it wrote or verified) and refuses to
   * start or sign when the database no longer holds it (`audit_anchor_mismatch`).
   */
  readonly home?: string;
  /**
   * The storage URL was pointed at a moved database on purpose (`acp serve --accept-moved-database`): where it
   * now reaches another database than the home last anchored through it, the node does not refuse
   * (`audit_anchor_database_changed`) but carries that database's anchor over, and holds the new one to it.
   */
  readonly acceptMovedDatabase?: boolean;
  /**
   * With an anchor: how often (ms, default 30000; 0: never) the node also checks the chain against it
   * between its own checkpoints, and so adopts other nodes' checkpoints soon after they are written.
   */
  readonly auditAnchorCheckMs?: number;
  /** Most pooled connections of this node (default 10). */
  readonly maxConnections?: number;
  /** Give up connecting after this long (default 5000 ms). */
  readonly connectTimeoutMs?: number;
  /**
   * How long a new consent request waits for its turn to be counted against the limit (ms, default 5000):
   * past it the request is refused as the queue being full (429), never left to the statement timeout.
   */
  readonly pendingLockTimeoutMs?: number;
  /**
   * Told about every lost connection (they are re-established) when no {@link log} is given; with one, its
   * two lines per outage say it instead (not one line per connection).
   */
  readonly onError?: (err: Error) => void;
  /**
   * One line when the node loses the database ("database unreachable (…)") and one when it answers again
   * ("database reachable again after Ns"), however many connections and requests fail in between; and, at
   * open, when this home had no anchor for a chain that already held rows, one before verifying it from row 1
   * (`postgresFirstAnchorStartMessage`) and one after, where it anchored (`postgresFirstAnchorMessage`).
   */
  readonly log?: (line: string) => void;
  /** Patterns redacted from every audit event before hashing (config.yml `redaction:`); default the built-in rules. */
  readonly redaction?: RedactionRules;
  /** Known secret values (the vault's), redacted from every audit event wherever they appear; read on every append. */
  readonly secrets?: () => readonly string[];
  /**
   * How far (ms) {@link clock} may be from the database's before the node refuses decisions and is not
   * ready (default `MAX_CLOCK_SKEW_MS`, 2000; 0 turns the check off): checked at open, by `/readyz` and
   * every 30 s.
   */
  readonly maxClockSkewMs?: number;
}

/** The line of a start that accepted a moved database (`--accept-moved-database`): which, and what it holds to. */
function movedDatabaseMessage(change: PostgresAnchorDatabaseChange, carriedFrom: string | null): string {
  const held =
    carriedFrom !== null
      ? `carried its anchor ${carriedFrom} over to ${change.nowAnchor}: the chain there must still hold that checkpoint`
      : `kept this home's own anchor for it (${change.nowAnchor}); the other stays in ${change.beforeAnchor}`;
  return (
    `the storage URL (\`${change.connection}\`) now reaches ${describePostgresDatabase(change.now)}, not ` +
    `${describePostgresDatabase(change.before)} as before; accepted as moved (--accept-moved-database): ${held}`
  );
}

/** Whether a checkpoint line verifies with the key; null when the line is not a readable checkpoint. */
function checkpointVerifies(line: string, publicKey: CheckpointPublicKey): boolean | null {
  let checkpoint;
  try {
    checkpoint = readCheckpoint(JSON.parse(line) as AuditEventV02);
  } catch {
    return null;
  }
  if (!checkpoint.ok) return null;
  return verifyCheckpointSignature(checkpoint.value.body, checkpoint.value.signature, publicKey);
}

/**
 * Refuses to join a chain this node's key did not sign: every node signs checkpoints with the home key,
 * and one started with other keys (a home not copied, no `acp init`) would append checkpoints no node
 * verifies — the shared chain would read as tampered for good. The chain's first checkpoint names its
 * key: when it does not verify, this node stops. When only the newest does not (a node with other keys
 * ran already), the node starts and `onForeign` is told. Each is one short read (a checkpoint comes at
 * least every 1000 events).
 */
export async function checkChainKey(
  store: PostgresStore,
  publicKey: CheckpointPublicKey,
  onForeign: (line: number) => void,
): Promise<void> {
  // a row too long for any audit line is read as its stand-in (not fetched whole): it is no checkpoint
  const read = async (order: "ASC" | "DESC"): Promise<{ seq: number; line: string } | undefined> => {
    const row = (
      await store.query<{ seq: number; line: string | null }>(
        "SELECT seq, CASE WHEN octet_length(line) > $1 THEN NULL ELSE COALESCE(line, '') END AS line " +
          `FROM acp_audit_events WHERE event_type = 'checkpoint' ORDER BY seq ${order} LIMIT 1`,
        [MAX_AUDIT_ROW_BYTES],
      )
    ).rows[0];
    return row === undefined ? undefined : { seq: row.seq, line: row.line ?? overlongAuditRow() };
  };
  const first = await read("ASC");
  if (first === undefined) return; // no checkpoint yet: this node may start the chain
  if (checkpointVerifies(first.line, publicKey) === false) {
    throw new Error(
      `the audit chain in this database is signed with another key (its first checkpoint, line ${first.seq}, ` +
        "does not verify with this home's public key): every node needs the same home keys — copy keys/ " +
        "from a node already running on this database",
    );
  }
  const newest = await read("DESC");
  if (newest !== undefined && checkpointVerifies(newest.line, publicKey) === false) onForeign(newest.seq);
}

/** First pause before a lost database is probed again (ms); doubles up to {@link PROBE_MAX_MS}. */
const PROBE_FIRST_MS = 200;
const PROBE_MAX_MS = 2000;

/**
 * Whether this node has lost the database: set by any lost connection or failed read the pool, the
 * `LISTEN` connections or the waiter report; cleared by the first query that answers after it (a probe
 * runs until one does).
 */
interface Reachability {
  lost(err: Error): void;
  answered(): void;
  readonly error: Error | null;
  close(): void;
}

function trackReachability(store: PostgresStore, log?: (line: string) => void): Reachability {
  let error: Error | null = null;
  let lostAt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;
  const answered = (): void => {
    if (error === null) return;
    error = null;
    // monotonic: the service's clock may be set, or frozen in tests
    log?.(`storage: database reachable again after ${((performance.now() - lostAt) / 1000).toFixed(1)}s`);
  };
  const probe = (delay: number): void => {
    if (timer !== null || closed) return;
    timer = setTimeout(() => {
      store.query("SELECT 1 AS one").then(
        () => {
          timer = null;
          answered();
        },
        () => {
          timer = null;
          if (error !== null) probe(Math.min(delay * 2, PROBE_MAX_MS));
        },
      );
    }, delay);
    timer.unref();
  };
  return {
    lost(err) {
      if (closed || store.closed) return;
      if (error === null) {
        lostAt = performance.now();
        log?.(`storage: database unreachable (${err.message}); decisions are refused (503) until it answers again`);
      }
      error = err;
      probe(PROBE_FIRST_MS);
    },
    answered,
    get error() {
      return error;
    },
    close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}

/**
 * The pending store, refusing an approval (`postgres_clock_skew`, 503, nothing recorded) while this node's
 * clock is off: the answer's window and the request's expiry are read on it. A denial only refuses: it stands.
 */
function approvalsOnTime(pending: AsyncPendingConsentStore, skew: ClockSkewGuard): AsyncPendingConsentStore {
  return {
    ...pending,
    decide: async (id, status, answer, nowMs) => {
      const off = status === "approved" ? skew.error : null;
      if (off !== null)
        throw new PostgresStoreError("postgres_clock_skew", `${off.message}: the approval was not recorded`);
      return pending.decide(id, status, answer, nowMs);
    },
  };
}

/** The ids a `(beforeMs, limit)` query lists. */
function idsOf(store: PostgresStore, sql: string) {
  return async (beforeMs: number, limit: number): Promise<string[]> =>
    (await store.query<{ id: string }>(sql, [Math.floor(beforeMs), Math.max(1, Math.floor(limit))])).rows.map(
      (r) => r.id,
    );
}

/**
 * Checks the chain against the node's anchor every `auditAnchorCheckMs` (default 30 s) between its own
 * checkpoints: other nodes' checkpoints are adopted soon after they are written, so a rewrite that drops
 * them is caught by this node too. A mismatch is logged once; the node then refuses (see `unavailable`).
 */
function watchAnchor(
  store: PostgresStore,
  anchor: PostgresAuditAnchor | undefined,
  options: PostgresStoresOptions,
): ReturnType<typeof setInterval> | null {
  const everyMs = options.auditAnchorCheckMs ?? 30_000;
  if (anchor === undefined || everyMs <= 0) return null;
  let running = false;
  const timer = setInterval(() => {
    if (running || anchor.error() !== null) return;
    running = true;
    anchor
      .sync((text, values) => store.query(text, values))
      .catch((err: unknown) => {
        // a lost database is told by the reachability lines; a mismatch once, here
        const mismatch = anchor.error();
        if (mismatch !== null && mismatch === err) {
          if (options.log !== undefined) options.log(mismatch.message);
          else options.onError?.(mismatch);
        }
      })
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return timer;
}

async function openParts(
  store: PostgresStore,
  options: PostgresStoresOptions,
  reach: Reachability,
  skew: ClockSkewGuard,
  anchor: PostgresAuditAnchor | undefined,
): Promise<ServerStores> {
  const report = (err: Error): void => {
    reach.lost(err);
    if (options.log === undefined) options.onError?.(err);
  };
  const waiter = await openConsentWaiter(store, { onError: report });
  const changes = await openNotifiedChangeFeed(store, { clock: options.clock, onError: report }).catch(
    async (err: unknown) => {
      await waiter.close();
      throw err;
    },
  );
  const auditLog = createPostgresAuditLog(store, {
    clock: options.clock,
    optimistic: true, // one INSERT per batch while this node wrote the head last; the locked way otherwise
    ...(anchor !== undefined ? { anchor } : {}),
    ...(options.auditSigner !== undefined ? { signer: options.auditSigner } : {}),
    ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  });
  const clockMs = (): number => options.clock().getTime();
  const anchorWatch = watchAnchor(store, anchor, options);
  const nonces = createPostgresNonceStore(store, { now: clockMs });
  return {
    kind: "postgres",
    location: store.url,
    pending: approvalsOnTime(
      createPostgresPendingConsentStore(
        store,
        options.pendingLockTimeoutMs !== undefined ? { lockTimeoutMs: options.pendingLockTimeoutMs } : {},
      ),
      skew,
    ),
    answers: { wait: (id, signal) => waiter.wait(id, { signal }) },
    consoleAuth: createPostgresConsoleAuthStore(store),
    grants: createPostgresConsentGrantStore(store),
    nonces,
    rateLimiter: createPostgresRateLimiter(store),
    proposals: createPostgresProposalLedger(store),
    attestations: createNonceAttestationLedger(nonces),
    // verified against this node's anchor, as `acp audit verify --storage-url` in its home verifies it
    audit: createPostgresAuditTrail(store, {
      ...(options.auditPublicKey !== undefined ? { publicKey: options.auditPublicKey } : {}),
      ...(anchor !== undefined ? { anchorPath: anchor.path, heldLine: () => anchor.heldLine() } : {}),
    }),
    auditLog,
    changes,
    // a lost database, or a clock too far from the database's (every expiry and window is read on it)
    // and a chain that no longer holds this node's signed checkpoint: nothing more is written to it
    unavailable: () => reach.error ?? skew.error ?? anchor?.error() ?? null,
    expiredPendingIds: idsOf(
      store,
      `SELECT id FROM pending_consent WHERE status = 'pending' AND expires_at_ms <= $1
       ORDER BY expires_at_ms LIMIT $2`,
    ),
    expiredAnsweredIds: idsOf(
      store,
      `SELECT p.id FROM pending_consent p WHERE p.status IN ('approved', 'denied') AND p.expires_at_ms <= $1
         AND NOT EXISTS (SELECT 1 FROM spent_nonces n WHERE n.nonce = p.nonce)
       ORDER BY p.expires_at_ms LIMIT $2`,
    ),
    pruneSpentNonces: (nowMs) => nonces.prune(nowMs),
    recoverAudit: async () => {
      try {
        await auditLog.flush(); // what was queued before has committed or failed: nothing fails after this
        if (anchor?.error() != null) return false; // not until the node is restarted and checks again
        await store.query("SELECT 1 AS one");
      } catch {
        return false;
      }
      reach.answered();
      return true;
    },
    ready: async () => {
      if (anchor?.error() != null) return false; // the chain no longer holds this node's signed checkpoint
      try {
        const ok = (await store.query("SELECT 1 AS one")).rowCount === 1;
        if (ok) reach.answered();
        return ok && (await skew.check()) === null;
      } catch (err) {
        reach.lost(err instanceof Error ? err : new Error(String(err)));
        return false;
      }
    },
    close: async () => {
      if (anchorWatch !== null) clearInterval(anchorWatch);
      reach.close();
      skew.close();
      changes.close();
      try {
        await auditLog.close();
      } finally {
        await waiter.close();
        await store.close();
      }
    },
  };
}

/**
 * Connects (a `postgres_url_invalid` / `postgres_unavailable` / `postgres_migration_failed`
 * {@link PostgresStoreError} when it cannot, its message naming the URL with the password masked),
 * applies the store's and the service's migrations, and opens the `LISTEN` connections.
 */
export async function openPostgresStores(options: PostgresStoresOptions): Promise<ServerStores> {
  let reach: Reachability | null = null;
  const store = await openPostgresStore(options.url, {
    migrations: SERVER_POSTGRES_MIGRATIONS,
    applicationName: "acp serve",
    ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
    onConnectionError: (err) => {
      reach?.lost(err);
      if (options.log === undefined) options.onError?.(err);
    },
  });
  reach = trackReachability(store, options.log);
  const skew = guardClockSkew(store, {
    clock: options.clock,
    maxMs: options.maxClockSkewMs ?? MAX_CLOCK_SKEW_MS,
    log: (line) => (options.log !== undefined ? options.log(line) : options.onError?.(new Error(line))),
  });
  try {
    await skew.check();
    if (options.auditPublicKey !== undefined) {
      await checkChainKey(store, options.auditPublicKey, (line) =>
        options.onError?.(
          new Error(
            `the audit chain holds a checkpoint signed with another key (line ${line}): a node ran with other home keys; ` +
              "the chain no longer verifies from there",
          ),
        ),
      );
    }
    const anchored =
      options.home !== undefined && options.auditSigner !== undefined && options.auditPublicKey !== undefined;
    // named from the database the connection reaches (not the URL's text); a file under the old name is moved
    const place = anchored
      ? await resolvePostgresAuditAnchorPath(options.home ?? "", options.url, (t, v) => store.query(t, v), {
          move: true,
          acceptMovedDatabase: options.acceptMovedDatabase === true,
        })
      : null;
    if (place?.movedFrom != null) options.log?.(`moved this home's audit anchor ${place.movedFrom} to ${place.path}`);
    if (place?.changed != null) options.log?.(movedDatabaseMessage(place.changed, place.carriedFrom));
    const anchorPath = place?.path ?? "";
    const anchor =
      anchored && options.auditPublicKey !== undefined
        ? await openPostgresAuditAnchor((text, values) => store.query(text, values), {
            path: anchorPath,
            publicKey: options.auditPublicKey,
            // a first use reads the whole chain before the node starts: said before, so a long wait is explained
            onFirstUse: (rows) => options.log?.(postgresFirstAnchorStartMessage(anchorPath, rows)),
            // with its first anchor the home records which database this storage URL reaches
            ...(place !== null ? { beforeWrite: place.recordDatabase } : {}),
          })
        : undefined;
    // a chain found with rows and no anchor in this home: verified from row 1 and anchored; said as the file log's
    if (anchor?.firstAnchor != null) options.log?.(postgresFirstAnchorMessage(anchor.path, anchor.firstAnchor));
    return await openParts(store, options, reach, skew, anchor);
  } catch (err) {
    reach.close();
    skew.close();
    await store.close();
    throw err;
  }
}
