/**
 * The consent change feed on PostgreSQL: every node `LISTEN`s on `acp_consent`; answers and settlements
 * notify there (the store does it in the same statement), and `poke` (after a request is raised on a
 * node) notifies every node. Each notification triggers one look at the pending table; a slow poll
 * covers a lost connection.
 */
import { CONSENT_CHANNEL, createPostgresPendingConsentStore, type PostgresStore } from "@acp/store";
import { createPolledChangeFeed } from "../polled-change-feed.js";
import type { ConsentChangeFeed } from "../types.js";

/** Options of {@link openNotifiedChangeFeed}. */
export interface NotifiedChangeFeedOptions {
  readonly clock: () => Date;
  /** The fallback poll (default 5 s). */
  readonly intervalMs?: number;
  /** Told about a lost `LISTEN` connection (it is reopened at the next poke or poll). */
  readonly onError?: (err: Error) => void;
}

/** Opens the feed and its `LISTEN` connection. */
export async function openNotifiedChangeFeed(
  store: PostgresStore,
  options: NotifiedChangeFeedOptions,
): Promise<ConsentChangeFeed> {
  const pending = createPostgresPendingConsentStore(store);
  const feed = createPolledChangeFeed(pending, {
    clock: options.clock,
    intervalMs: options.intervalMs ?? 5000,
  });
  let client: Awaited<ReturnType<PostgresStore["connectDedicated"]>> | null = null;
  let closed = false;

  const listen = async (): Promise<void> => {
    const next = await store.connectDedicated();
    next.on("notification", (msg) => {
      if (msg.channel !== CONSENT_CHANNEL) return;
      if (msg.payload === undefined || msg.payload === "") return feed.poke();
      // an answer or settlement names its request: report it even if it was raised and settled between looks
      pending.get(msg.payload).then(
        (row) => {
          if (row !== null && row.status !== "pending") feed.reportSettled(row.id, row.status);
          feed.poke();
        },
        () => feed.poke(),
      );
    });
    const lost = (err?: Error): void => {
      if (err !== undefined) options.onError?.(err);
      if (client === next) client = null;
      next.end().catch(() => undefined);
    };
    next.on("error", lost);
    next.on("end", () => lost());
    await next.query(`LISTEN ${CONSENT_CHANNEL}`);
    if (closed) await next.end();
    else client = next;
  };
  const ensure = (): void => {
    if (client !== null || closed || store.closed) return;
    listen().catch((err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err))));
  };

  await listen();
  return {
    subscribe(listener) {
      ensure();
      return feed.subscribe(listener);
    },
    poke() {
      ensure();
      if (closed || store.closed) return;
      store.query(`SELECT pg_notify('${CONSENT_CHANNEL}', '')`).catch(() => feed.poke());
    },
    close() {
      closed = true;
      feed.close();
      const current = client;
      client = null;
      current?.end().catch(() => undefined);
    },
  };
}
