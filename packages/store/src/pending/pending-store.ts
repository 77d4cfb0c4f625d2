import type { Database, Statement } from "better-sqlite3";
import { ensurePendingConsentSchema, type PendingStatus } from "./schema.js";
import { ownerOf, toPendingConsentRow, type PendingConsentRawRow } from "./pending-row.js";
import { ownerState, type PendingOwner } from "./owner.js";
import {
  assertPendingLimit,
  checkPendingLimit,
  sessionCaller,
  type PendingInsertResult,
  type PendingLimit,
} from "./pending-limit.js";
import { SETTLED_CONSENT_PURGE_BATCH, settledConsentCutoff } from "./retention.js";
import {
  assertPageQuery,
  fitPage,
  lastOf,
  pageStart,
  type PendingId,
  type PendingPage,
  type PendingPageQuery,
  type SizedPendingRow,
} from "./pending-page.js";

/** One consent request as the shared store keeps it. Times are epoch milliseconds. */
export interface PendingConsentRow {
  readonly id: string;
  readonly nonce: string;
  readonly sessionId: string | null;
  readonly server: string;
  readonly tool: string;
  /** The `consent_request` (§4.1) as written, parameters already redacted; null if unreadable. */
  readonly request: unknown;
  /** The reasons behind the decision, as written; null if unreadable. */
  readonly reasons: unknown;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
  readonly status: PendingStatus;
  /** The human's answer as recorded by `decide`; null until decided (or when settled by another channel). */
  readonly answer: unknown;
  readonly decidedAtMs: number | null;
  /** The process waiting for the answer; null when not recorded (an older row, a PostgreSQL store). */
  readonly owner: PendingOwner | null;
}

/**
 * What a waiter polls ({@link PendingConsentStore.peek}): whether a row was answered, without its JSON. The
 * request and reasons (up to a megabyte each) are read once, by `get`, when `status` says it ended.
 */
export interface PendingConsentPeek {
  readonly nonce: string;
  readonly status: PendingStatus;
  /** Whether the row holds an answer (`decide` recorded one). */
  readonly answered: boolean;
  readonly decidedAtMs: number | null;
}

/** What `insert` takes. */
export interface NewPendingConsent {
  readonly id: string;
  readonly nonce: string;
  readonly sessionId?: string;
  readonly server: string;
  readonly tool: string;
  readonly request: unknown;
  readonly reasons: unknown;
  readonly createdAtMs: number;
  readonly expiresAtMs: number;
}

/** Why an answer could not be recorded. */
export type DecideFailure = "consent_request_unknown" | "consent_request_expired" | "consent_request_already_decided";

/** The outcome of `decide`: the row as decided, or why not. */
export type DecideResult =
  | { readonly ok: true; readonly row: PendingConsentRow }
  | { readonly ok: false; readonly code: DecideFailure; readonly status?: PendingStatus };

/** The pending-consent table of `state.db`: the CLI channel writes requests, `acp approve|deny` answers them. */
export interface PendingConsentStore {
  /**
   * Adds a pending request, first dropping rows settled a day after their request ended (`retention.ts`).
   * Throws if the id exists (ids are random; a clash is a bug).
   */
  insert(request: NewPendingConsent): void;
  /**
   * Adds a pending request unless `limit` is full: counts the requests pending and unexpired at its
   * `createdAtMs` (those of a gone owner aside, see `settleOrphaned`) and inserts in one immediate
   * transaction, so two processes cannot both take the last place. Throws if the id exists.
   */
  insertWithinLimit(request: NewPendingConsent, limit: PendingLimit): PendingInsertResult;
  /** The row with this id, or null. */
  get(id: string): PendingConsentRow | null;
  /** The row's nonce, status and whether it holds an answer, without reading its JSON; null if there is none. */
  peek(id: string): PendingConsentPeek | null;
  /** Requests still pending and not expired at `nowMs`, oldest first. */
  listPending(nowMs: number): PendingConsentRow[];
  /**
   * One page of the requests `listPending` lists ({@link PendingPageQuery}): the ids and sizes are read
   * first, then only the rows that fit the page's limit and byte budget.
   */
  listPendingPage(nowMs: number, query: PendingPageQuery): PendingPage;
  /**
   * The ids (and owners) of the requests `listPending` lists, oldest first, without reading their JSON: what
   * a count or a change feed needs, however large the requests.
   */
  listPendingIds(nowMs: number): PendingId[];
  /**
   * Records a human's answer, once: atomically moves a pending, unexpired row to `approved` or `denied`.
   * A second answer, an unknown id or an expired request is refused and changes nothing.
   */
  decide(id: string, status: "approved" | "denied", answer: unknown, nowMs: number): DecideResult;
  /** Closes a still-pending row with the final outcome (answered elsewhere, expired, withdrawn). True if it changed. */
  settle(id: string, status: Exclude<PendingStatus, "pending">, nowMs: number): boolean;
  /** Deletes rows that are no longer pending and were created before `beforeMs`; returns how many. */
  deleteSettledBefore(beforeMs: number): number;
  /**
   * Settles as `withdrawn` every pending row whose owner is gone (`ownerState`: the process that waited for
   * the answer died without settling it) and returns those rows as they were before. Rows of a running
   * owner, of another machine or without an owner are left alone.
   */
  settleOrphaned(nowMs: number): PendingConsentRow[];
  /**
   * The answered rows (approved or denied, with an answer) whose owner is gone and whose nonce is not spent
   * (`spent_nonces`, when the nonce store made it): the process that waited died before it read and checked
   * the answer — or did not, if it spends the nonce between this read and the caller's own spend, which
   * decides. A row whose nonce is spent (the answer was used, or concluded by an earlier start) is not read
   * again, so a start does no work for the rows earlier starts handled. Nothing is changed.
   */
  answeredOrphans(): PendingConsentRow[];
}

/** An answered row (approved or denied, with an answer) of a process (`owner_pid`): `answeredOrphans`. */
const ANSWERED_OWNED = "status IN ('approved','denied') AND answer_json IS NOT NULL AND owner_pid IS NOT NULL";

/** A pending row as `insertWithinLimit` counts it. */
type CountedRow = Pick<PendingConsentRawRow, "status" | "session_id" | "owner_pid" | "owner_host" | "owner_start"> & {
  readonly agent: unknown;
};

/** SQLite's "database is locked" after the busy timeout (`SQLITE_BUSY` and its extended codes). */
const isBusy = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
};

/** Options of {@link createPendingConsentStore}. */
export interface PendingConsentStoreOptions {
  /**
   * The process waiting for the answers of the rows this store inserts (`acp proxy`: {@link currentOwner}):
   * once it is gone, nobody reads them, and they are orphaned (`settleOrphaned`). Default: none — `acp serve`'s
   * rows outlive its process (any node may complete them, `POST /v1/consent/{id}/complete`).
   */
  readonly owner?: PendingOwner;
}

/**
 * The pending-consent store on a better-sqlite3 database handed in (usually `$ACP_HOME/state.db`).
 * Creates its table if missing. Every write is a single statement or an immediate transaction, so two
 * processes answering the same request at once cannot both succeed.
 */
export function createPendingConsentStore(db: Database, options: PendingConsentStoreOptions = {}): PendingConsentStore {
  ensurePendingConsentSchema(db);
  const owner = options.owner;
  const insertStmt = db.prepare(
    `INSERT INTO pending_consent (id, nonce, session_id, server, tool, request_json, reasons_json, created_at_ms,
       expires_at_ms, owner_pid, owner_host, owner_start)
     VALUES (@id, @nonce, @session_id, @server, @tool, @request_json, @reasons_json, @created_at_ms, @expires_at_ms,
       @owner_pid, @owner_host, @owner_start)`,
  );
  const ownedStmt: Statement<[], PendingConsentRawRow> = db.prepare<[], PendingConsentRawRow>(
    "SELECT * FROM pending_consent WHERE status = 'pending' AND owner_pid IS NOT NULL ORDER BY created_at_ms, id",
  );
  const answeredOwnedStmt: Statement<[], PendingConsentRawRow> = db.prepare<[], PendingConsentRawRow>(
    `SELECT * FROM pending_consent WHERE ${ANSWERED_OWNED} ORDER BY created_at_ms, id`,
  );
  // the spent-nonce table is the nonce store's (`createSqliteNonceStore`): prepared once it exists
  const hasSpentNoncesStmt = db.prepare<[], { one: number }>(
    "SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'spent_nonces'",
  );
  let answeredUnspentStmt: Statement<[], PendingConsentRawRow> | undefined;
  const answeredUnspent = (): PendingConsentRawRow[] => {
    if (answeredUnspentStmt === undefined) {
      if (hasSpentNoncesStmt.get() === undefined) return answeredOwnedStmt.all();
      answeredUnspentStmt = db.prepare<[], PendingConsentRawRow>(
        `SELECT * FROM pending_consent p WHERE ${ANSWERED_OWNED}
           AND NOT EXISTS (SELECT 1 FROM spent_nonces s WHERE s.nonce = p.nonce)
         ORDER BY created_at_ms, id`,
      );
    }
    return answeredUnspentStmt.all();
  };
  const getStmt: Statement<[string], PendingConsentRawRow> = db.prepare<[string], PendingConsentRawRow>(
    "SELECT * FROM pending_consent WHERE id = ?",
  );
  type PeekRaw = Pick<PendingConsentRawRow, "nonce" | "status" | "decided_at_ms"> & { answered: number };
  const peekStmt: Statement<[string], PeekRaw> = db.prepare<[string], PeekRaw>(
    "SELECT nonce, status, decided_at_ms, answer_json IS NOT NULL AS answered FROM pending_consent WHERE id = ?",
  );
  const listStmt: Statement<[number], PendingConsentRawRow> = db.prepare<[number], PendingConsentRawRow>(
    "SELECT * FROM pending_consent WHERE status = 'pending' AND expires_at_ms > ? ORDER BY created_at_ms, id",
  );
  // a page: the ids and sizes after the cursor (`limit + 1` of them: one more tells whether rows are left),
  // then the rows that fit, still pending and unexpired
  type SizedParams = { now: number; at: number; id: string; n: number };
  const sizedStmt = db.prepare<[SizedParams], SizedPendingRow>(
    `SELECT id, created_at_ms AS createdAtMs, length(request_json) + length(reasons_json) AS bytes
     FROM pending_consent WHERE status = 'pending' AND expires_at_ms > @now
       AND (created_at_ms > @at OR (created_at_ms = @at AND id > @id))
     ORDER BY created_at_ms, id LIMIT @n`,
  );
  const pageRowsStmt = db.prepare<[{ ids: string; now: number }], PendingConsentRawRow>(
    `SELECT * FROM pending_consent WHERE id IN (SELECT value FROM json_each(@ids))
       AND status = 'pending' AND expires_at_ms > @now
     ORDER BY created_at_ms, id`,
  );
  const idsStmt = db.prepare<[number], Pick<PendingConsentRawRow, "id" | "owner_pid" | "owner_host" | "owner_start">>(
    `SELECT id, owner_pid, owner_host, owner_start FROM pending_consent
     WHERE status = 'pending' AND expires_at_ms > ? ORDER BY created_at_ms, id`,
  );
  const decideStmt = db.prepare(
    `UPDATE pending_consent SET status = ?, answer_json = ?, decided_at_ms = ?
     WHERE id = ? AND status = 'pending' AND expires_at_ms > ?`,
  );
  const settleStmt = db.prepare(
    "UPDATE pending_consent SET status = ?, decided_at_ms = ? WHERE id = ? AND status = 'pending'",
  );
  // the agent of each pending row (JSON read by SQLite, a malformed row names none), its session and its owner
  const countStmt = db.prepare<[number], CountedRow>(
    `SELECT CASE WHEN json_valid(request_json) THEN json_extract(request_json, '$.agent.id') END AS agent,
       status, session_id, owner_pid, owner_host, owner_start
     FROM pending_consent WHERE status = 'pending' AND expires_at_ms > ?`,
  );
  const purgeStmt = db.prepare("DELETE FROM pending_consent WHERE status != 'pending' AND created_at_ms < ?");
  // settled rows whose request ended long before (`retention.ts`), a batch at a time (the status index serves it)
  const dropEndedStmt = db.prepare<[number]>(
    `DELETE FROM pending_consent WHERE rowid IN (SELECT rowid FROM pending_consent
       WHERE status IN ('approved', 'denied', 'expired', 'withdrawn') AND expires_at_ms < ?
       LIMIT ${SETTLED_CONSENT_PURGE_BATCH})`,
  );

  const get = (id: string): PendingConsentRow | null => {
    const raw = getStmt.get(id);
    return raw === undefined ? null : toPendingConsentRow(raw);
  };

  const decide = db.transaction(
    (id: string, status: "approved" | "denied", answer: unknown, nowMs: number): DecideResult => {
      const changed = decideStmt.run(status, JSON.stringify(answer), nowMs, id, nowMs).changes;
      const row = get(id);
      if (changed === 1 && row !== null) return { ok: true, row };
      if (row === null) return { ok: false, code: "consent_request_unknown" };
      if (row.status === "pending") return { ok: false, code: "consent_request_expired", status: row.status };
      return { ok: false, code: "consent_request_already_decided", status: row.status };
    },
  );

  const insert = (request: NewPendingConsent): void => {
    dropEndedStmt.run(settledConsentCutoff(request.createdAtMs));
    insertStmt.run({
      id: request.id,
      nonce: request.nonce,
      session_id: request.sessionId ?? null,
      server: request.server,
      tool: request.tool,
      request_json: JSON.stringify(request.request),
      reasons_json: JSON.stringify(request.reasons),
      created_at_ms: request.createdAtMs,
      expires_at_ms: request.expiresAtMs,
      owner_pid: owner?.pid ?? null,
      owner_host: owner?.host ?? null,
      owner_start: owner?.start ?? null,
    });
  };

  const insertWithinLimit = db.transaction((request: NewPendingConsent, limit: PendingLimit): PendingInsertResult => {
    const waiting = countStmt.all(request.createdAtMs).filter((row) => ownerState(ownerOf(row)) !== "gone");
    const agent = limit.perAgent?.agent;
    const caller = limit.perCaller?.caller;
    // a row an `acp proxy` owns was raised by no caller of the service
    const ofCaller = (row: CountedRow): boolean =>
      (row.owner_pid ?? null) === null && sessionCaller(row.session_id) === caller;
    const count = {
      total: waiting.length,
      agent: waiting.filter((row) => row.agent === agent).length,
      caller: caller === undefined ? 0 : waiting.filter(ofCaller).length,
    };
    const verdict = checkPendingLimit(limit, count);
    if (verdict.ok) insert(request);
    return verdict;
  });

  return {
    insert,
    insertWithinLimit: (request, limit) => {
      assertPendingLimit(limit);
      try {
        return insertWithinLimit.immediate(request, limit);
      } catch (err) {
        // another process held state.db's write lock past the busy timeout: nothing written, ask again later
        if (isBusy(err)) return { ok: false, full: "busy" };
        throw err;
      }
    },
    get,
    peek: (id) => {
      const raw = peekStmt.get(id);
      if (raw === undefined) return null;
      return { nonce: raw.nonce, status: raw.status, answered: raw.answered === 1, decidedAtMs: raw.decided_at_ms };
    },
    listPending: (nowMs) => listStmt.all(nowMs).map(toPendingConsentRow),
    listPendingIds: (nowMs) => idsStmt.all(nowMs).map((raw) => ({ id: raw.id, owner: ownerOf(raw) })),
    listPendingPage: (nowMs, query) => {
      assertPageQuery(query);
      const start = pageStart(query.after);
      const sized = sizedStmt.all({ now: nowMs, at: start.createdAtMs, id: start.id, n: query.limit + 1 });
      const { take, more } = fitPage(sized, query);
      const ids = JSON.stringify(sized.slice(0, take).map((row) => row.id));
      const rows = take === 0 ? [] : pageRowsStmt.all({ ids, now: nowMs }).map(toPendingConsentRow);
      return { rows, last: lastOf(sized, take), more };
    },
    decide: (id, status, answer, nowMs) => decide.immediate(id, status, answer, nowMs),
    settle: (id, status, nowMs) => settleStmt.run(status, nowMs, id).changes === 1,
    deleteSettledBefore: (beforeMs) => purgeStmt.run(beforeMs).changes,
    settleOrphaned: (nowMs) =>
      ownedStmt
        .all()
        .map(toPendingConsentRow)
        .filter((row) => ownerState(row.owner) === "gone")
        .filter((row) => settleStmt.run("withdrawn", nowMs, row.id).changes === 1),
    answeredOrphans: () =>
      answeredUnspent()
        .map(toPendingConsentRow)
        .filter((row) => ownerState(row.owner) === "gone"),
  };
}
