/**
 * A consent change feed that reads the pending table: while anyone listens, it compares the pending
 * requests with the last look every `intervalMs` (other processes write the table too: `acp approve`,
 * a proxy) and at once after a write through this service (`poke`).
 */
import type { PendingConsentStore } from "@acp/store";
import type { ConsentChange, ConsentChangeFeed } from "./types.js";

/** Options of {@link createPolledChangeFeed}. */
export interface PolledChangeFeedOptions {
  readonly clock: () => Date;
  /** Default 500 ms. */
  readonly intervalMs?: number;
}

/** Creates the feed. It polls only while it has subscribers. */
export function createPolledChangeFeed(
  store: PendingConsentStore,
  options: PolledChangeFeedOptions,
): ConsentChangeFeed {
  const listeners = new Set<(change: ConsentChange) => void>();
  let known = new Set<string>();
  let timer: NodeJS.Timeout | null = null;

  const look = (): void => {
    if (listeners.size === 0) return;
    let rows;
    try {
      rows = store.listPending(options.clock().getTime());
    } catch {
      return; // the next look tries again; a broken table shows on /readyz
    }
    const now = new Set(rows.map((r) => r.id));
    const changes: ConsentChange[] = [];
    for (const id of now) if (!known.has(id)) changes.push({ kind: "pending", id, status: "pending" });
    for (const id of known) {
      if (now.has(id)) continue;
      changes.push({ kind: "settled", id, status: store.get(id)?.status ?? "expired" });
    }
    known = now;
    for (const change of changes) for (const listener of listeners) listener(change);
  };

  const start = (): void => {
    if (timer !== null) return;
    known = new Set(store.listPending(options.clock().getTime()).map((r) => r.id));
    timer = setInterval(look, options.intervalMs ?? 500);
    timer.unref();
  };

  return {
    subscribe(listener) {
      start();
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer !== null) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    poke: look,
    close() {
      listeners.clear();
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
