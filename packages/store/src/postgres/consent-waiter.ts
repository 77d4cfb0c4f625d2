import type { PendingConsentRow } from "../pending/index.js";
import { watchConsentDecisions, type ConsentWatch } from "./consent-watch.js";
import type { PostgresStore } from "./open-postgres-store.js";
import { createPostgresPendingConsentStore } from "./pending-store.js";
import { PostgresStoreError } from "./postgres-store-error.js";

/** Waits, on one node, for consent requests to be answered on any node. */
export interface ConsentWaiter {
  /**
   * Resolves with the row once it is no longer pending (approved or denied on any node, or settled),
   * at once when it already is. Rejects with `postgres_consent_unknown` for an id not in the store, with
   * the signal's reason when aborted, and with `postgres_store_closed` when the waiter closes.
   */
  wait(id: string, options?: { readonly signal?: AbortSignal }): Promise<PendingConsentRow>;
  /** How many waits are open (bounded by the caller's pending requests). */
  readonly size: number;
  close(): Promise<void>;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the wait for a consent decision was aborted");
}

interface Waiting {
  readonly resolve: (row: PendingConsentRow) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * One `LISTEN` connection serving every wait of this node. After the connection is lost and restored
 * (notifications sent meanwhile are gone), every open wait re-reads its row, so a decision taken while
 * this node was cut off is still seen. A node that restarts calls `wait` again for its requests: the
 * rows are in PostgreSQL, so nothing decided meanwhile is lost.
 */
export async function openConsentWaiter(
  store: PostgresStore,
  options: { readonly onError?: (err: Error) => void } = {},
): Promise<ConsentWaiter> {
  const pending = createPostgresPendingConsentStore(store);
  const waiting = new Map<string, Set<Waiting>>();
  const settle = (row: PendingConsentRow): void => {
    const set = waiting.get(row.id);
    if (set === undefined || row.status === "pending") return;
    waiting.delete(row.id);
    for (const w of set) w.resolve(row);
  };
  const recheck = (id: string): void => {
    pending.get(id).then(
      (row) => {
        if (row !== null) settle(row);
      },
      (err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err))),
    );
  };
  const watch: ConsentWatch = await watchConsentDecisions(store, settle, {
    onResume: () => {
      for (const id of waiting.keys()) recheck(id);
    },
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  let closed = false;
  return {
    get size() {
      return waiting.size;
    },
    wait(id, waitOptions = {}) {
      if (closed) return Promise.reject(new PostgresStoreError("postgres_store_closed", "consent waiter is closed"));
      const { signal } = waitOptions;
      if (signal?.aborted === true) return Promise.reject(abortReason(signal));
      return new Promise<PendingConsentRow>((resolve, reject) => {
        const onAbort = (): void => drop(new Error("aborted"));
        const entry: Waiting = {
          resolve: (row) => {
            signal?.removeEventListener("abort", onAbort);
            resolve(row);
          },
          reject: (err) => {
            signal?.removeEventListener("abort", onAbort);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        };
        /** Stops waiting: leaves the table and rejects (with the signal's reason when aborted). */
        function drop(err: Error): void {
          const set = waiting.get(id);
          set?.delete(entry);
          if (set?.size === 0) waiting.delete(id);
          entry.reject(signal?.aborted === true ? abortReason(signal) : err);
        }
        signal?.addEventListener("abort", onAbort, { once: true });
        const set = waiting.get(id) ?? new Set<Waiting>();
        set.add(entry);
        waiting.set(id, set);
        pending.get(id).then(
          (row) => {
            if (row !== null) return settle(row);
            drop(new PostgresStoreError("postgres_consent_unknown", `consent request \`${id}\` is not in the store`));
          },
          (err: unknown) => drop(err instanceof Error ? err : new Error(String(err))),
        );
      });
    },
    async close() {
      closed = true;
      await watch.close();
      const error = new PostgresStoreError("postgres_store_closed", "consent waiter is closed");
      for (const set of waiting.values()) for (const w of set) w.reject(error);
      waiting.clear();
    },
  };
}
