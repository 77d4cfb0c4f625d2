import type { PendingConsentRow } from "../pending/index.js";
import { watchConsentDecisions } from "./consent-watch.js";
import type { PostgresStore } from "./open-postgres-store.js";
import { createPostgresPendingConsentStore } from "./pending-store.js";
import { PostgresStoreError } from "./postgres-store-error.js";

/** Waits, on one node, for consent requests to be answered on any node. */
export interface ConsentWaiter {
  /**
   * Resolves with the row once it is no longer pending (approved or denied on any node, or settled),
   * at once when it already is. Rejects with `postgres_consent_unknown` for an id not in the store, with
   * the signal's reason when aborted, and with `postgres_store_closed` when the waiter or store closes.
   * A read that fails (a lost connection) is retried; give a signal to bound the wait.
   */
  wait(id: string, options?: { readonly signal?: AbortSignal }): Promise<PendingConsentRow>;
  /** How many request ids are waited for (bounded by the caller's pending requests). */
  readonly size: number;
  close(): Promise<void>;
}

/** Options of {@link openConsentWaiter}. */
export interface ConsentWaiterOptions {
  /** Told about lost connections and failed reads (each is retried). */
  readonly onError?: (err: Error) => void;
  /** First pause before a failed read is retried (ms, default 100); doubles up to 5 s. */
  readonly retryMs?: number;
  /**
   * Besides the notifications, how often the rows waited for are looked at (ms, default
   * {@link CONSENT_WAIT_POLL_MS}; one query for all of them): a notification can be lost with no
   * disconnect to say so — a `LISTEN` connection the network cut without a reset (noticed only when TCP
   * keep-alive gives up, hours later), a pooler in transaction mode that does not pass `LISTEN` on.
   */
  readonly pollMs?: number;
}

/** How often a waiter looks at the rows it waits for, whatever the notifications say (ms). */
export const CONSENT_WAIT_POLL_MS = 5000;

interface Waiting {
  readonly resolve: (row: PendingConsentRow) => void;
  readonly reject: (err: Error) => void;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the wait for a consent decision was aborted");
}

/**
 * One `LISTEN` connection serving every wait of this node. Each wait reads its row once after `LISTEN`
 * is active (so no decision slips between), again whenever the connection is restored (notifications sent
 * meanwhile are gone), so a decision taken while this node was cut off is still seen, and again (with
 * backoff) when a notification named it but its row could not be read then.
 * A node that restarts calls `wait` again for its requests: the rows are in PostgreSQL, nothing is lost.
 */
export async function openConsentWaiter(
  store: PostgresStore,
  options: ConsentWaiterOptions = {},
): Promise<ConsentWaiter> {
  const pending = createPostgresPendingConsentStore(store);
  const waiting = new Map<string, Set<Waiting>>();
  const report = (err: unknown): void => options.onError?.(asError(err));
  let closed = false;

  const settle = (row: PendingConsentRow): void => {
    const set = waiting.get(row.id);
    if (set === undefined || row.status === "pending") return;
    waiting.delete(row.id);
    for (const w of set) w.resolve(row);
  };
  const rejectAll = (id: string, err: Error): void => {
    const set = waiting.get(id);
    waiting.delete(id);
    for (const w of set ?? []) w.reject(err);
  };
  /** Reads the row; retries with backoff while the read fails and someone still waits. */
  const check = (id: string, delay = options.retryMs ?? 100): void => {
    pending.get(id).then(
      (row) => {
        if (row !== null) return settle(row);
        rejectAll(
          id,
          new PostgresStoreError("postgres_consent_unknown", `consent request \`${id}\` is not in the store`),
        );
      },
      (err: unknown) => {
        if (closed || store.closed) return rejectAll(id, asError(err));
        report(err);
        setTimeout(() => {
          if (waiting.has(id) && !closed) check(id, Math.min(delay * 2, 5000));
        }, delay).unref();
      },
    );
  };

  const watch = await watchConsentDecisions(store, settle, {
    onResume: () => {
      for (const id of waiting.keys()) check(id);
    },
    // a decision announced while its row could not be read: read it again (with backoff) until it answers
    onMissed: (id) => {
      if (waiting.has(id) && !closed) check(id);
    },
    onError: report,
  });

  // the rows answered without their notification reaching this node: one query for every wait
  const poll = setInterval(
    () => {
      if (waiting.size === 0 || closed || store.closed) return;
      store
        .query<{ id: string }>("SELECT id FROM pending_consent WHERE id = ANY($1::text[]) AND status <> 'pending'", [
          [...waiting.keys()],
        ])
        .then((rows) => {
          for (const { id } of rows.rows) if (waiting.has(id)) check(id);
        }, report);
    },
    Math.max(10, options.pollMs ?? CONSENT_WAIT_POLL_MS),
  );
  poll.unref();

  const wait = (id: string, signal: AbortSignal | undefined): Promise<PendingConsentRow> =>
    new Promise<PendingConsentRow>((resolve, reject) => {
      const onAbort = (): void => {
        const set = waiting.get(id);
        set?.delete(entry);
        if (set?.size === 0) waiting.delete(id);
        reject(abortReason(signal as AbortSignal));
      };
      const entry: Waiting = {
        resolve: (row) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(row);
        },
        reject: (err) => {
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const set = waiting.get(id);
      if (set !== undefined) return void set.add(entry);
      waiting.set(id, new Set([entry]));
      check(id);
    });

  return {
    get size() {
      return waiting.size;
    },
    wait(id, waitOptions = {}) {
      if (closed) return Promise.reject(new PostgresStoreError("postgres_store_closed", "consent waiter is closed"));
      const { signal } = waitOptions;
      if (signal?.aborted === true) return Promise.reject(abortReason(signal));
      return wait(id, signal);
    },
    async close() {
      closed = true;
      clearInterval(poll);
      await watch.close();
      const error = new PostgresStoreError("postgres_store_closed", "consent waiter is closed");
      for (const id of [...waiting.keys()]) rejectAll(id, error);
    },
  };
}
