/**
 * Waiting for an answer on SQLite (no notifications): a waiter wakes at once when this process records the
 * answer (the console, the API, an expiry: {@link PolledAnswers.wake}), and reads its row every few
 * hundred milliseconds only to see answers other processes write (`acp approve`, `acp deny`). A poll reads
 * the row's status alone (`peek`); the whole row, arguments and all, is read once, when the request ended.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AsyncPendingConsentStore, PendingConsentRow } from "@acp/store";
import type { ConsentAnswers } from "./types.js";

function aborted(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the wait for a consent answer was aborted");
}

/** The answers of the pending table, and the wake-up of the waiters on one row. */
export interface PolledAnswers extends ConsentAnswers {
  /** Row `id` changed in this process: its waiters read it now instead of at their next poll. */
  wake(id: string): void;
}

/**
 * Peeks at the row's status until it is no longer pending (when woken for it, else every `intervalMs`), then
 * reads the row once and returns it.
 */
export function createPolledAnswers(store: AsyncPendingConsentStore, intervalMs: number): PolledAnswers {
  const waiters = new Map<string, Set<() => void>>();
  return {
    wake(id) {
      for (const wakeUp of waiters.get(id) ?? []) wakeUp();
    },
    async wait(id, signal): Promise<PendingConsentRow> {
      // listen before the first read: an answer written between the read and the pause still wakes it
      let woken = false;
      let wakeUp: (() => void) | null = null;
      const listener = (): void => {
        woken = true;
        wakeUp?.();
      };
      const set = waiters.get(id) ?? new Set();
      set.add(listener);
      waiters.set(id, set);
      try {
        for (;;) {
          if (signal.aborted) throw aborted(signal);
          woken = false;
          // the status only: the request's JSON (up to a megabyte) is read once, when it says the request ended
          const peek = await store.peek(id);
          const row = peek === null || peek.status !== "pending" ? await store.get(id) : undefined;
          if (row === null) throw new Error(`consent request \`${id}\` is not in the pending table`);
          if (row !== undefined && row.status !== "pending") return row;
          if (woken) continue;
          // until the poll interval ends, the row is woken or the wait is aborted (at once if it already was)
          const pause = new AbortController();
          wakeUp = () => pause.abort();
          try {
            await sleep(intervalMs, undefined, { signal: AbortSignal.any([signal, pause.signal]) });
          } catch {
            if (signal.aborted) throw aborted(signal);
          } finally {
            wakeUp = null;
          }
        }
      } finally {
        set.delete(listener);
        if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
      }
    },
  };
}
