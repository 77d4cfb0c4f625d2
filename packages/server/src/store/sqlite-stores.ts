/** The embedded stores: SQLite `state.db` for consent, nonces, rate limits and console state; the JSONL audit chain. */
import type { CheckpointPublicKey, CheckpointSigner, RedactionRules } from "@acp/core";
import {
  createConsentGrantStore,
  createPendingConsentStore,
  createNonceAttestationLedger,
  createSqliteNonceStore,
  createSqliteProposalLedger,
  createSqliteRateLimiter,
  isOrphaned,
  ownerState,
  openAuditLog,
  openPendingConsentDb,
  reanchoredMessage,
  toAsyncPendingConsentStore,
  type AsyncPendingConsentStore,
} from "@acp/store";
import { createBatchedAppender } from "./batched-appender.js";
import { createFileAuditTrail } from "./file-audit-trail.js";
import { createPolledAnswers } from "./polled-answers.js";
import { createPolledChangeFeed } from "./polled-change-feed.js";
import { createSqliteConsoleAuthStore } from "./sqlite-console-auth.js";
import type { ServerStores } from "./types.js";

/** Where the embedded stores live. */
export interface SqliteStoresOptions {
  /** `$ACP_HOME/state.db`, or `:memory:`. */
  readonly statePath: string;
  /** `$ACP_HOME/audit.jsonl`. */
  readonly auditPath: string;
  readonly clock: () => Date;
  /** Signs audit checkpoints. */
  readonly auditSigner?: CheckpointSigner;
  readonly auditPublicKey?: CheckpointPublicKey;
  /** The signer's key lives only as long as this process: the audit anchor's signature is not checked at open. */
  readonly auditEphemeralKey?: boolean;
  /** How often the change feed looks at the pending table. Default 500 ms. */
  readonly pollIntervalMs?: number;
  /**
   * How often a waiting call reads its row for an answer another process wrote (`acp approve`). Default
   * 500 ms; an answer recorded by this process (console, API) wakes the waiter at once.
   */
  readonly answerPollMs?: number;
  /** Patterns redacted from every audit event before hashing (config.yml `redaction:`); default the built-in rules. */
  readonly redaction?: RedactionRules;
  /** Known secret values (the vault's), redacted from every audit event wherever they appear; read on every append. */
  readonly secrets?: () => readonly string[];
  /** Tells the person one line (acp serve's stderr): here, that the audit log was found without its anchor. */
  readonly log?: (line: string) => void;
}

/** Opens the embedded stores (and the audit writer: group commit, one fsync per batch). The caller closes them. */
export async function openSqliteStores(options: SqliteStoresOptions): Promise<ServerStores> {
  const db = openPendingConsentDb(options.statePath);
  let auditLog;
  try {
    auditLog = await openAuditLog(options.auditPath, {
      clock: options.clock,
      fsync: "batch",
      ...(options.auditSigner !== undefined ? { signer: options.auditSigner } : {}),
      ...(options.auditEphemeralKey === true ? { ephemeralSigner: true } : {}),
      ...(options.redaction !== undefined ? { redaction: options.redaction } : {}),
      ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
    });
  } catch (err) {
    db.close();
    throw err;
  }
  // found with signed checkpoints and no anchor, verified in full and anchored again: said as acp proxy says it
  if (auditLog.reanchored !== null) options.log?.(reanchoredMessage(auditLog, auditLog.reanchored));
  const table = toAsyncPendingConsentStore(createPendingConsentStore(db));
  const answers = createPolledAnswers(table, options.answerPollMs ?? 500);
  // an answer, expiry or withdrawal recorded through this process wakes its waiter at once; the polling
  // only finds what other processes (acp approve, acp deny) write
  const pending: AsyncPendingConsentStore = {
    ...table,
    // a request whose acp proxy died (same state.db) waits for nobody: not listed, not counted, not answerable
    listPending: async (nowMs) => (await table.listPending(nowMs)).filter((row) => !isOrphaned(row)),
    listPendingIds: async (nowMs) =>
      (await table.listPendingIds(nowMs)).filter((row) => ownerState(row.owner) !== "gone"),
    listPendingPage: async (nowMs, query) => {
      const page = await table.listPendingPage(nowMs, query);
      return { ...page, rows: page.rows.filter((row) => !isOrphaned(row)) };
    },
    decide: async (id, status, answer, nowMs) => {
      const result = await table.decide(id, status, answer, nowMs);
      if (result.ok) answers.wake(id);
      return result;
    },
    settle: async (id, status, nowMs) => {
      const changed = await table.settle(id, status, nowMs);
      if (changed) answers.wake(id);
      return changed;
    },
  };
  const grants = createConsentGrantStore(db);
  const changes = createPolledChangeFeed(pending, {
    clock: options.clock,
    ...(options.pollIntervalMs !== undefined ? { intervalMs: options.pollIntervalMs } : {}),
  });
  const ping = db.prepare("SELECT 1 AS one");
  // the service's own rows (no owner: any process of it may complete them) still pending after their expiry;
  // an acp proxy's rows are its own, and settled `withdrawn` by the next proxy once it is gone
  const expiredServiceRows = db.prepare<[number, number], { id: string }>(
    `SELECT id FROM pending_consent WHERE status = 'pending' AND expires_at_ms <= ? AND owner_pid IS NULL
     ORDER BY expires_at_ms LIMIT ?`,
  );
  const nonces = createSqliteNonceStore(db, { now: () => options.clock().getTime() });
  const answeredServiceRows = db.prepare<[number, number], { id: string }>(
    `SELECT p.id FROM pending_consent p WHERE p.status IN ('approved', 'denied') AND p.expires_at_ms <= ?
       AND p.owner_pid IS NULL AND NOT EXISTS (SELECT 1 FROM spent_nonces n WHERE n.nonce = p.nonce)
     ORDER BY p.expires_at_ms LIMIT ?`,
  );
  const idsOf =
    (stmt: typeof expiredServiceRows) =>
    (beforeMs: number, limit: number): Promise<string[]> =>
      Promise.resolve().then(() => stmt.all(Math.floor(beforeMs), Math.max(1, Math.floor(limit))).map((r) => r.id));
  const log = auditLog;
  // the appends of one event-loop turn go to the writer as one appendMany (in order, one promise per group)
  const batched = createBatchedAppender(log);
  return {
    kind: "sqlite",
    location: options.statePath,
    pending,
    answers,
    consoleAuth: createSqliteConsoleAuthStore(db),
    grants: {
      add: (key, untilMs, grant, nowMs) => Promise.resolve().then(() => grants.add(key, untilMs, grant, nowMs)),
      find: (key, nowMs) => Promise.resolve().then(() => grants.find(key, nowMs)),
      deleteEnded: (nowMs) => Promise.resolve().then(() => grants.deleteEnded(nowMs)),
    },
    nonces,
    rateLimiter: createSqliteRateLimiter(db),
    proposals: createSqliteProposalLedger(db),
    attestations: createNonceAttestationLedger(nonces),
    audit: createFileAuditTrail(
      options.auditPath,
      options.auditPublicKey !== undefined ? { publicKey: options.auditPublicKey } : {},
    ),
    auditLog: {
      append: (input) => batched.append(input),
      flush: () => batched.flush(),
      close: async () => {
        await batched.flush();
        await log.close();
      },
    },
    changes,
    expiredPendingIds: idsOf(expiredServiceRows),
    expiredAnsweredIds: idsOf(answeredServiceRows),
    pruneSpentNonces: (nowMs) => Promise.resolve().then(() => nonces.prune(nowMs)),
    ready: () => {
      try {
        return Promise.resolve(ping.get() !== undefined);
      } catch {
        return Promise.resolve(false);
      }
    },
    close: async () => {
      changes.close();
      try {
        await batched.flush();
        await log.close();
      } finally {
        if (db.open) db.close();
      }
    },
  };
}
