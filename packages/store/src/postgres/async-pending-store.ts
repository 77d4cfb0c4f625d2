import {
  PENDING_STATUSES,
  type DecideResult,
  type NewPendingConsent,
  type PendingConsentRow,
  type PendingConsentPeek,
  type PendingInsertResult,
  type PendingLimit,
  type PendingConsentStore,
  type PendingStatus,
  type PendingId,
  type PendingPage,
  type PendingPageQuery,
} from "../pending/index.js";
import { PostgresStoreError } from "./postgres-store-error.js";

/**
 * The pending-consent store as every implementation offers it: the SQLite store (synchronous, adapted by
 * {@link toAsyncPendingConsentStore}) and the PostgreSQL one. Same rows, statuses and failure codes as
 * {@link PendingConsentStore}; every answer is a promise.
 */
export interface AsyncPendingConsentStore {
  /** Adds a pending request. Rejects if the id exists (ids are random; a clash is a bug). */
  insert(request: NewPendingConsent): Promise<void>;
  /**
   * Adds a pending request unless `limit` is full (nothing is written then), counting the requests pending
   * and unexpired at its `createdAtMs` and inserting in one atomic step: of requests racing in from every
   * process and node on the store, no more than the limit get in. Rejects if the id exists.
   */
  insertWithinLimit(request: NewPendingConsent, limit: PendingLimit): Promise<PendingInsertResult>;
  /** The row with this id, or null. */
  get(id: string): Promise<PendingConsentRow | null>;
  /**
   * The row's nonce, status and whether it holds an answer, without reading its JSON; null if there is none.
   * What a waiter polls: it reads the whole row (`get`) once the status says the request ended.
   */
  peek(id: string): Promise<PendingConsentPeek | null>;
  /** Requests still pending and not expired at `nowMs`, oldest first. */
  listPending(nowMs: number): Promise<PendingConsentRow[]>;
  /**
   * One page of them ({@link PendingPageQuery}): after a cursor, at most `limit` rows and, beyond the first,
   * `maxBytes` of stored JSON; the ids and sizes are read first, then only the rows that fit.
   */
  listPendingPage(nowMs: number, query: PendingPageQuery): Promise<PendingPage>;
  /** The ids of the requests `listPending` lists, oldest first, without reading their JSON (a count, a feed). */
  listPendingIds(nowMs: number): Promise<PendingId[]>;
  /**
   * Records a human's answer, once: atomically moves a pending, unexpired row to `approved` or `denied`.
   * A second answer (from any node), an unknown id or an expired request is refused and changes nothing.
   */
  decide(id: string, status: "approved" | "denied", answer: unknown, nowMs: number): Promise<DecideResult>;
  /** Closes a still-pending row with the final outcome. True if it changed. */
  settle(id: string, status: Exclude<PendingStatus, "pending">, nowMs: number): Promise<boolean>;
  /** Deletes rows that are no longer pending and were created before `beforeMs`; returns how many. */
  deleteSettledBefore(beforeMs: number): Promise<number>;
}

function invalidStatus(what: string, status: unknown): PostgresStoreError {
  return new PostgresStoreError("postgres_input_invalid", `pending consent: invalid ${what} \`${String(status)}\``);
}

/**
 * Wraps the synchronous SQLite {@link PendingConsentStore}: a thrown error becomes a rejection. Like the
 * PostgreSQL store, it refuses an answer other than `approved`/`denied` and a settlement as `pending`
 * (the SQLite store itself would record them).
 */
export function toAsyncPendingConsentStore(store: PendingConsentStore): AsyncPendingConsentStore {
  const run = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  };
  return {
    insert: (request) => run(() => store.insert(request)),
    insertWithinLimit: (request, limit) => run(() => store.insertWithinLimit(request, limit)),
    get: (id) => run(() => store.get(id)),
    peek: (id) => run(() => store.peek(id)),
    listPending: (nowMs) => run(() => store.listPending(nowMs)),
    listPendingPage: (nowMs, query) => run(() => store.listPendingPage(nowMs, query)),
    listPendingIds: (nowMs) => run(() => store.listPendingIds(nowMs)),
    decide: (id, status, answer, nowMs) =>
      run(() => {
        if (status !== "approved" && status !== "denied") throw invalidStatus("answer", status);
        return store.decide(id, status, answer, nowMs);
      }),
    settle: (id, status, nowMs) =>
      run(() => {
        if ((status as PendingStatus) === "pending" || !PENDING_STATUSES.includes(status)) {
          throw invalidStatus("settlement", status);
        }
        return store.settle(id, status, nowMs);
      }),
    deleteSettledBefore: (beforeMs) => run(() => store.deleteSettledBefore(beforeMs)),
  };
}
