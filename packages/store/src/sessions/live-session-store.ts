import type { Database } from "better-sqlite3";
import { applyMigrations } from "../sqlite/index.js";
import { LIVE_SESSION_MIGRATIONS, type IntentUpdateStatus, type LiveSessionStatus } from "./schema.js";
import { CLOSED_SESSION_KEEP_MS, CLOSED_SESSION_PURGE_BATCH } from "./retention.js";
import { currentOwner, ownerState, type PendingOwner } from "../pending/owner.js";

/** One session a proxy runs, as every process sharing the home sees it. Times are epoch milliseconds. */
export interface LiveSessionRow {
  readonly id: string;
  /** The proxy process that runs it. */
  readonly pid: number;
  /** The agent's client name from `initialize`, when known. */
  readonly agent: string | null;
  readonly startedAtMs: number;
  readonly endedAtMs: number | null;
  readonly status: LiveSessionStatus;
  /** The intent version and hash in force. */
  readonly intentVersion: number;
  readonly intentHash: string;
  /** How many intent updates were ever queued for it (the counter the proxy checks before each call). */
  readonly updateSeq: number;
}

/** One queued intent update: the signed payload as written, and what became of it. */
export interface IntentUpdateRow {
  readonly sessionId: string;
  readonly seq: number;
  readonly payloadJson: string;
  /** Ed25519 signature over the payload bytes, hex. */
  readonly signature: string;
  readonly createdAtMs: number;
  readonly status: IntentUpdateStatus;
  /** Why it was rejected, or what it changed. */
  readonly outcome: string | null;
  readonly settledAtMs: number | null;
}

/** What `register` takes. */
export interface NewLiveSession {
  readonly id: string;
  readonly pid: number;
  readonly agent?: string;
  readonly startedAtMs: number;
  readonly intentVersion: number;
  readonly intentHash: string;
}

/** Options of {@link createLiveSessionStore}. */
export interface LiveSessionStoreOptions {
  /**
   * The process that runs the sessions this store registers, recorded with each (machine and start time) so
   * that a session left `live` by a proxy that died can be told; used for sessions of its pid. Default: this
   * process (`currentOwner()`) for a session whose pid is this process's; other sessions record none (never
   * taken for gone).
   */
  readonly owner?: PendingOwner;
}

/** Signs an update once its sequence number is known (inside the queueing transaction). */
export type SignUpdate = (seq: number, session: LiveSessionRow) => { payloadJson: string; signature: string };

/** The outcome of `queueUpdate`. */
export type QueueUpdateResult =
  | { readonly ok: true; readonly seq: number; readonly session: LiveSessionRow }
  | { readonly ok: false; readonly code: "session_unknown" | "session_finished"; readonly session?: LiveSessionRow };

/** The live-session registry in `state.db`. Every method is one statement or one `BEGIN IMMEDIATE` transaction. */
export interface LiveSessionStore {
  /**
   * Records a session (once: a second register of an id changes nothing), first closing the live sessions of
   * proxies on this machine that are gone, and deleting sessions closed more than a day before it started,
   * with their updates (`retention.ts`).
   */
  register(session: NewLiveSession): void;
  /** Records the intent now in force (after an update was applied). */
  noteIntent(id: string, version: number, hash: string): void;
  /** Marks the session closed; later updates are refused. */
  close(id: string, atMs: number): void;
  get(id: string): LiveSessionRow | undefined;
  /** Sessions newest first; only live ones unless `all`. */
  list(options?: { readonly all?: boolean }): LiveSessionRow[];
  /** Queues a signed update for a live session; the sequence number is assigned here. */
  queueUpdate(id: string, createdAtMs: number, sign: SignUpdate): QueueUpdateResult;
  /** The session's update counter (0 for an unknown session): one indexed read, cheap enough for every call. */
  updateSeq(id: string): number;
  /** Pending updates after `afterSeq`, oldest first. */
  pendingUpdates(id: string, afterSeq: number): IntentUpdateRow[];
  /** Every update of a session, oldest first. */
  updates(id: string): IntentUpdateRow[];
  /** Settles a pending update once; returns false when it was not pending. */
  settleUpdate(
    id: string,
    seq: number,
    status: Exclude<IntentUpdateStatus, "pending">,
    outcome: string,
    atMs: number,
  ): boolean;
}

interface RawSession {
  id: string;
  pid: number;
  agent: string | null;
  started_at_ms: number;
  ended_at_ms: number | null;
  status: LiveSessionStatus;
  intent_version: number;
  intent_hash: string;
  update_seq: number;
}

interface RawUpdate {
  session_id: string;
  seq: number;
  payload_json: string;
  signature: string;
  created_at_ms: number;
  status: IntentUpdateStatus;
  outcome: string | null;
  settled_at_ms: number | null;
}

const sessionOf = (r: RawSession): LiveSessionRow => ({
  id: r.id,
  pid: r.pid,
  agent: r.agent,
  startedAtMs: r.started_at_ms,
  endedAtMs: r.ended_at_ms,
  status: r.status,
  intentVersion: r.intent_version,
  intentHash: r.intent_hash,
  updateSeq: r.update_seq,
});

const updateOf = (r: RawUpdate): IntentUpdateRow => ({
  sessionId: r.session_id,
  seq: r.seq,
  payloadJson: r.payload_json,
  signature: r.signature,
  createdAtMs: r.created_at_ms,
  status: r.status,
  outcome: r.outcome,
  settledAtMs: r.settled_at_ms,
});

/**
 * The registry of live sessions shared through `$ACP_HOME/state.db`: the proxy registers each downstream
 * session and reads its update counter before each call; `acp intent set` queues signed updates. Closed
 * sessions go a day after they ended (`retention.ts`). Applies its migrations on open.
 */
export function createLiveSessionStore(db: Database, options: LiveSessionStoreOptions = {}): LiveSessionStore {
  applyMigrations(db, LIVE_SESSION_MIGRATIONS);
  const liveHere = db.prepare<[string], { id: string; pid: number; owner_start: string | null }>(
    "SELECT id, pid, owner_start FROM live_sessions WHERE status = 'live' AND owner_host = ?",
  );
  const ended = db.prepare<[number, number], { id: string }>(
    "SELECT id FROM live_sessions WHERE status = 'closed' AND ended_at_ms < ? ORDER BY ended_at_ms LIMIT ?",
  );
  const dropUpdates = db.prepare<[string]>("DELETE FROM session_intent_updates WHERE session_id = ?");
  const dropSession = db.prepare<[string]>("DELETE FROM live_sessions WHERE id = ? AND status = 'closed'");
  const insert = db.prepare(
    `INSERT INTO live_sessions (id, pid, agent, started_at_ms, intent_version, intent_hash, owner_host, owner_start)
     VALUES (@id, @pid, @agent, @startedAtMs, @intentVersion, @intentHash, @ownerHost, @ownerStart)
     ON CONFLICT (id) DO NOTHING`,
  );
  const note = db.prepare<[number, string, string]>(
    "UPDATE live_sessions SET intent_version = ?, intent_hash = ? WHERE id = ?",
  );
  const closeOne = db.prepare<[number, string]>(
    "UPDATE live_sessions SET status = 'closed', ended_at_ms = ? WHERE id = ? AND status = 'live'",
  );
  const getOne = db.prepare<[string], RawSession>("SELECT * FROM live_sessions WHERE id = ?");
  const listLive = db.prepare<[], RawSession>(
    "SELECT * FROM live_sessions WHERE status = 'live' ORDER BY started_at_ms DESC, rowid DESC",
  );
  const listAll = db.prepare<[], RawSession>("SELECT * FROM live_sessions ORDER BY started_at_ms DESC, rowid DESC");
  // the column's value itself (no row object): read before every call of every session
  const seqOf = db.prepare<[string], number>("SELECT update_seq FROM live_sessions WHERE id = ?").pluck();
  const bump = db.prepare<[number, string]>("UPDATE live_sessions SET update_seq = ? WHERE id = ?");
  const insertUpdate = db.prepare<[string, number, string, string, number]>(
    `INSERT INTO session_intent_updates (session_id, seq, payload_json, signature, created_at_ms)
     VALUES (?, ?, ?, ?, ?)`,
  );
  const pending = db.prepare<[string, number], RawUpdate>(
    "SELECT * FROM session_intent_updates WHERE session_id = ? AND seq > ? AND status = 'pending' ORDER BY seq",
  );
  const all = db.prepare<[string], RawUpdate>("SELECT * FROM session_intent_updates WHERE session_id = ? ORDER BY seq");
  const settle = db.prepare<[string, string, number, string, number]>(
    `UPDATE session_intent_updates SET status = ?, outcome = ?, settled_at_ms = ?
     WHERE session_id = ? AND seq = ? AND status = 'pending'`,
  );
  const queue = db.transaction((id: string, createdAtMs: number, sign: SignUpdate): QueueUpdateResult => {
    const raw = getOne.get(id);
    if (raw === undefined) return { ok: false, code: "session_unknown" };
    const session = sessionOf(raw);
    if (session.status !== "live") return { ok: false, code: "session_finished", session };
    const seq = session.updateSeq + 1;
    const signed = sign(seq, session);
    insertUpdate.run(id, seq, signed.payloadJson, signed.signature, createdAtMs);
    bump.run(seq, id);
    return { ok: true, seq, session: { ...session, updateSeq: seq } };
  });
  // an owner of another pid would have this session's proxy taken for gone while it runs
  const ownerOf = (pid: number): PendingOwner | null =>
    options.owner?.pid === pid ? options.owner : pid === process.pid ? currentOwner() : null;
  const registerOne = db.transaction((s: NewLiveSession) => {
    const here = currentOwner().host;
    for (const row of liveHere.all(here)) {
      if (ownerState({ pid: row.pid, host: here, start: row.owner_start }) === "gone") {
        closeOne.run(s.startedAtMs, row.id);
      }
    }
    for (const { id } of ended.all(s.startedAtMs - CLOSED_SESSION_KEEP_MS, CLOSED_SESSION_PURGE_BATCH)) {
      dropUpdates.run(id);
      dropSession.run(id);
    }
    const owner = ownerOf(s.pid);
    insert.run({
      id: s.id,
      pid: s.pid,
      agent: s.agent ?? null,
      startedAtMs: s.startedAtMs,
      intentVersion: s.intentVersion,
      intentHash: s.intentHash,
      ownerHost: owner?.host ?? null,
      ownerStart: owner?.start ?? null,
    });
  });
  return {
    register: (s) => registerOne.immediate(s),
    noteIntent: (id, version, hash) => void note.run(version, hash, id),
    close: (id, atMs) => void closeOne.run(atMs, id),
    get: (id) => {
      const raw = getOne.get(id);
      return raw === undefined ? undefined : sessionOf(raw);
    },
    list: (options = {}) => (options.all === true ? listAll.all() : listLive.all()).map(sessionOf),
    queueUpdate: (id, createdAtMs, sign) => queue.immediate(id, createdAtMs, sign),
    updateSeq: (id) => seqOf.get(id) ?? 0,
    pendingUpdates: (id, afterSeq) => pending.all(id, afterSeq).map(updateOf),
    updates: (id) => all.all(id).map(updateOf),
    settleUpdate: (id, seq, status, outcome, atMs) => settle.run(status, outcome, atMs, id, seq).changes === 1,
  };
}
