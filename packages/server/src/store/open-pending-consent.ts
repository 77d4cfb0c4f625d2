/**
 * The pending-consent table alone (for `acp pending`, `acp approve`, `acp deny`), on SQLite or PostgreSQL,
 * behind the one {@link AsyncPendingConsentStore} interface the service itself answers through.
 */
import {
  clockSkewBeyond,
  createPendingConsentStore,
  createPostgresPendingConsentStore,
  openPendingConsentDb,
  openPostgresStore,
  stateDbPresent,
  describeClockSkew,
  MAX_CLOCK_SKEW_MS,
  measureClockSkew,
  PostgresStoreError,
  toAsyncPendingConsentStore,
  type AsyncPendingConsentStore,
  type PostgresStore,
} from "@acp/store";

/** An open pending-consent store and how to close it. */
export interface PendingConsentHandle {
  readonly store: AsyncPendingConsentStore;
  /** `state.db`'s path, or the PostgreSQL URL with its password masked. */
  readonly location: string;
  close(): Promise<void>;
}

/**
 * The store, refusing an approval given with a clock more than `MAX_CLOCK_SKEW_MS` from the database's
 * (`postgres_clock_skew`, nothing written): `acp approve` reads `--for` and the request's expiry on this
 * machine's clock, so one behind would approve an expired request and one ahead give a longer window. The
 * nodes guard their own clocks; this machine need not be one. A denial only refuses, so it is not checked.
 */
function approvalsOnTime(pg: PostgresStore, store: AsyncPendingConsentStore): AsyncPendingConsentStore {
  return {
    ...store,
    async decide(id, status, answer, nowMs) {
      if (status === "approved") {
        const reading = await measureClockSkew(pg, () => nowMs);
        if (clockSkewBeyond(reading, MAX_CLOCK_SKEW_MS)) {
          throw new PostgresStoreError(
            "postgres_clock_skew",
            `this machine's clock is ${describeClockSkew(reading)} the database's (at most ${MAX_CLOCK_SKEW_MS} ms ` +
              "allowed): an approval's times are read on it, so nothing was recorded; set the clock (NTP) or answer from a node",
          );
        }
      }
      return store.decide(id, status, answer, nowMs);
    },
  };
}

/**
 * Opens the pending-consent store: PostgreSQL when `storageUrl` is given, `statePath` (SQLite) otherwise.
 * Creates nothing: null when there is no table yet (no `state.db`, or no `acp serve` has prepared the
 * database), which means nothing is pending. Rejects when the database cannot be reached (the store's
 * `postgres_unavailable`, see `explainStorageError`).
 */
export async function openPendingConsent(options: {
  readonly storageUrl?: string;
  readonly statePath: string;
}): Promise<PendingConsentHandle | null> {
  if (options.storageUrl !== undefined) {
    const pg = await openPostgresStore(options.storageUrl, { migrate: false, max: 1, applicationName: "acp-cli" });
    try {
      const table = await pg.query<{ t: string | null }>("SELECT to_regclass('pending_consent')::text AS t");
      if (table.rows[0]?.t == null) {
        await pg.close();
        return null;
      }
    } catch (err) {
      await pg.close();
      throw err;
    }
    return {
      store: approvalsOnTime(pg, createPostgresPendingConsentStore(pg)),
      location: pg.url,
      close: () => pg.close(),
    };
  }
  // a link at the name, even dangling, is not "no state.db": opening it refuses it (state_db_unsafe)
  if (!stateDbPresent(options.statePath)) return null;
  const db = openPendingConsentDb(options.statePath);
  try {
    return {
      store: toAsyncPendingConsentStore(createPendingConsentStore(db)),
      location: options.statePath,
      close: () => {
        db.close();
        return Promise.resolve();
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
