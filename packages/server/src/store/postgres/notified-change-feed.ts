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
  /** Told about a lost `LISTEN` connection (it is reopened with backoff: 100 ms doubling to 5 s). */
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
  let connecting = false;
  let retry: NodeJS.Timeout | null = null;
  let delay = 100;

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
      next.end().catch(() => undefined);
      if (client !== next) return;
      client = null;
      // listen again without waiting for this node's next poke: the other nodes' changes come that way
      feed.poke(); // what changed while the connection was down
      schedule();
    };
    next.on("error", lost);
    next.on("end", () => lost());
    try {
      await next.query(`LISTEN ${CONSENT_CHANNEL}`);
    } catch (err) {
      await next.end().catch(() => undefined);
      throw err;
    }
    if (closed) await next.end();
    else client = next;
  };
  function schedule(): void {
    if (retry !== null || closed || store.closed) return;
    retry = setTimeout(() => {
      retry = null;
      ensure();
    }, delay);
    retry.unref();
    delay = Math.min(delay * 2, 5000);
  }
  function ensure(): void {
    if (client !== null || connecting || closed || store.closed) return;
    connecting = true;
    listen().then(
      () => {
        connecting = false;
        delay = 100;
        feed.poke(); // notifications sent while it was down are gone: look once
      },
      (err: unknown) => {
        connecting = false;
        options.onError?.(err instanceof Error ? err : new Error(String(err)));
        schedule();
      },
    );
  }

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
      if (retry !== null) clearTimeout(retry);
      retry = null;
      feed.close();
      const current = client;
      client = null;
      current?.end().catch(() => undefined);
    },
  };
}
