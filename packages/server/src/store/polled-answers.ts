/** Waiting for an answer by reading the pending table every few milliseconds (SQLite: no notifications). */
import type { AsyncPendingConsentStore, PendingConsentRow } from "@acp/store";
import type { ConsentAnswers } from "./types.js";

function aborted(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("the wait for a consent answer was aborted");
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(aborted(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Polls the row every `intervalMs` until it is no longer pending. */
export function createPolledAnswers(store: AsyncPendingConsentStore, intervalMs: number): ConsentAnswers {
  return {
    async wait(id, signal): Promise<PendingConsentRow> {
      for (;;) {
        if (signal.aborted) throw aborted(signal);
        const row = await store.get(id);
        if (row === null) throw new Error(`consent request \`${id}\` is not in the pending table`);
        if (row.status !== "pending") return row;
        await pause(intervalMs, signal);
      }
    },
  };
}
