/**
 * A consent change feed that reads the pending table: while anyone listens, it compares the pending
 * requests with the last look every `intervalMs` (other processes write the table too: `acp approve`,
 * a proxy, other nodes) and at once after a write through this service (`poke`). Looks never overlap:
 * a poke during a look runs one more look after it.
 */
import type { AsyncPendingConsentStore } from "@acp/store";
import type { ConsentChange, ConsentChangeFeed } from "./types.js";

/** Options of {@link createPolledChangeFeed}. */
export interface PolledChangeFeedOptions {
  readonly clock: () => Date;
  /** Default 500 ms. */
  readonly intervalMs?: number;
}

/** The feed, plus a way to report a change learnt elsewhere (a notification naming the request). */
export interface PolledChangeFeed extends ConsentChangeFeed {
  /** Tells subscribers about a request that was settled, unless a look already did. */
  reportSettled(id: string, status: string): void;
}

/** Creates the feed. It polls only while it has subscribers. */
export function createPolledChangeFeed(
  store: AsyncPendingConsentStore,
  options: PolledChangeFeedOptions,
): PolledChangeFeed {
  const reported = new Set<string>();
  const listeners = new Set<(change: ConsentChange) => void>();
  let known: Set<string> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let looking = false;
  let again = false;

  const diff = async (): Promise<void> => {
    // the ids alone: a look must not read every waiting request whole (a flood of megabyte arguments)
    const rows = await store.listPendingIds(options.clock().getTime());
    const now = new Set(rows.map((r) => r.id));
    const before = known;
    known = now;
    if (before === null) return;
    const changes: ConsentChange[] = [];
    for (const id of now) if (!before.has(id)) changes.push({ kind: "pending", id, status: "pending" });
    for (const id of before) {
      if (now.has(id) || reported.delete(id)) continue;
      changes.push({ kind: "settled", id, status: (await store.get(id))?.status ?? "expired" });
    }
    for (const change of changes) for (const listener of listeners) listener(change);
  };

  const look = (): void => {
    if (listeners.size === 0) return;
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    diff()
      .catch(() => undefined) // the next look tries again; a broken table shows on /readyz
      .finally(() => {
        looking = false;
        if (again) {
          again = false;
          look();
        }
      });
  };

  const stop = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
    known = null;
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      if (timer === null) {
        timer = setInterval(look, options.intervalMs ?? 500);
        timer.unref();
        look(); // the first look learns what is pending now
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
    poke: look,
    reportSettled(id, status) {
      if (listeners.size === 0) return;
      if (known?.has(id) === true) reported.add(id); // the next look does not report it again
      if (reported.size > 10_000) reported.clear();
      const change: ConsentChange = { kind: "settled", id, status };
      for (const listener of listeners) listener(change);
    },
    close() {
      listeners.clear();
      stop();
    },
  };
}
