import type pg from "pg";
import type { PendingConsentRow } from "../pending/index.js";
import type { PostgresStore } from "./open-postgres-store.js";
import { CONSENT_CHANNEL, createPostgresPendingConsentStore } from "./pending-store.js";

/** A running watch; `close` ends its connection and stops reconnecting. */
export interface ConsentWatch {
  close(): Promise<void>;
}

/** Options of {@link watchConsentDecisions}. */
export interface WatchConsentOptions {
  /**
   * Called each time the watch listens again after its connection was lost (a restarted server, a
   * network cut): notifications sent meanwhile are gone, so re-read what you wait for.
   */
  readonly onResume?: () => void;
  /** Told about lost connections, failed reconnects and failed reads (default: ignored). */
  readonly onError?: (err: Error) => void;
  /**
   * A notification named request `id`, but its row could not be read (no pooled connection in time, a
   * statement timeout) while the `LISTEN` connection stayed up: the decision it announced is not delivered,
   * and no reconnect will re-read it. Read it again if you wait for it (after `onError` was told).
   */
  readonly onMissed?: (id: string) => void;
  /** First pause before reconnecting (ms, default 100); doubles up to 5 s. */
  readonly retryMs?: number;
}

/**
 * Calls `onDecision` with the row each time a pending consent request is answered or settled on ANY
 * node (`NOTIFY acp_consent, '<id>'` from {@link createPostgresPendingConsentStore}). Resolves once
 * `LISTEN` is active, so a decision committed after that is never missed while connected; rejects if
 * the first connection fails. A lost connection is re-established with backoff, then `onResume` runs.
 */
export async function watchConsentDecisions(
  store: PostgresStore,
  onDecision: (row: PendingConsentRow) => void,
  options: WatchConsentOptions = {},
): Promise<ConsentWatch> {
  const pending = createPostgresPendingConsentStore(store);
  const report = (err: unknown): void => options.onError?.(err instanceof Error ? err : new Error(String(err)));
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let delay = options.retryMs ?? 100;

  const deliver = (id: string): void => {
    pending.get(id).then(
      (row) => {
        if (row !== null && row.status !== "pending" && !closed) onDecision(row);
      },
      (err: unknown) => {
        report(err);
        if (!closed) options.onMissed?.(id);
      },
    );
  };

  const listen = async (): Promise<void> => {
    const next = await store.connectDedicated();
    next.on("notification", (msg) => {
      if (msg.channel === CONSENT_CHANNEL && msg.payload !== undefined) deliver(msg.payload);
    });
    next.on("error", (err) => {
      report(err);
      lost(next);
    });
    next.on("end", () => lost(next));
    try {
      await next.query(`LISTEN ${CONSENT_CHANNEL}`);
    } catch (err) {
      await next.end().catch(() => undefined);
      throw err;
    }
    client = next;
    delay = options.retryMs ?? 100;
  };

  const reconnect = (): void => {
    timer = null;
    if (closed || store.closed) return;
    listen().then(
      () => options.onResume?.(),
      (err: unknown) => {
        report(err);
        delay = Math.min(delay * 2, 5000);
        timer = setTimeout(reconnect, delay);
      },
    );
  };

  function lost(which: pg.Client): void {
    if (client !== which) return;
    client = null;
    which.end().catch(() => undefined);
    if (!closed && timer === null) timer = setTimeout(reconnect, delay);
  }

  await listen();
  return {
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      const current = client;
      client = null;
      await current?.end().catch(() => undefined);
    },
  };
}
