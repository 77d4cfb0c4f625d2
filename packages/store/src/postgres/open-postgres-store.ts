import type pg from "pg";
import type { ClientConfig, PoolClient, QueryResult, QueryResultRow } from "pg";
import { applyPostgresMigrations, type PostgresMigration } from "./migrations.js";
import { messageOf, PostgresStoreError } from "./postgres-store-error.js";
import { POSTGRES_MIGRATIONS } from "./schema.js";

const INT8_OID = 20;

/** BIGINT columns hold epoch milliseconds and counts: read them as numbers, not strings. */
const typesOf = (driver: typeof pg): ClientConfig["types"] => ({
  getTypeParser: ((oid: number, format?: "text" | "binary"): unknown =>
    oid === INT8_OID && format !== "binary"
      ? (value: string): number => Number(value)
      : driver.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
});

/** Options of {@link openPostgresStore}. */
export interface OpenPostgresStoreOptions {
  /** Most pooled connections (default 10). */
  readonly max?: number;
  /** Give up connecting after this long (ms, default 5000). */
  readonly connectTimeoutMs?: number;
  /**
   * The server cancels a statement (a lock wait included) that runs longer (ms, default 30,000), so a
   * stuck database fails a decision (which then refuses) instead of hanging it. 0 turns it off.
   */
  readonly statementTimeoutMs?: number;
  /**
   * This side gives up on a query that has had no answer for this long (ms; default the statement timeout
   * plus 5000, none when that is off) and drops its connection: a database cut off by the network (no reset)
   * cannot cancel anything, and a query would otherwise wait for the kernel to give up on the socket
   * (a quarter of an hour). It rejects with `postgres_unavailable`, told to `onConnectionError` too.
   */
  readonly queryTimeoutMs?: number;
  /** `application_name` shown in `pg_stat_activity` (default `acp`). */
  readonly applicationName?: string;
  /** Apply the store's migrations at open (default true). */
  readonly migrate?: boolean;
  /** Further migrations applied after the store's own (same id rules). */
  readonly migrations?: readonly PostgresMigration[];
  /** Told about errors of idle pooled connections (a restarted server); they are otherwise dropped. */
  readonly onConnectionError?: (err: Error) => void;
}

/** An open PostgreSQL state store: one pool shared by the nonce store, limiter, pending store and audit log. */
export interface PostgresStore {
  /** The URL with any password replaced by `***` (safe to print). */
  readonly url: string;
  readonly closed: boolean;
  /** Runs one statement on a pooled connection (autocommit). */
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: readonly unknown[]): Promise<QueryResult<R>>;
  /** Runs `fn` in `BEGIN … COMMIT` on one connection; rolls back when it throws. */
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T>;
  /** A new connection outside the pool (for `LISTEN`); the caller ends it. */
  connectDedicated(): Promise<pg.Client>;
  /** Ends the pool; idempotent. Later calls reject with `postgres_store_closed`. */
  close(): Promise<void>;
}

/** Characters of a password that must be percent-encoded in a URL, said in the errors. */
const ENCODE_HINT = "percent-encode @ / ? # : in the user or password (%40 %2F %3F %23 %3A)";

/** Query parameters whose value is a secret (libpq's `password`, `sslpassword`). */
const SECRET_PARAM = /pass|secret/i;

/**
 * The URL with its password masked (also a `?password=` parameter). Throws `postgres_url_invalid`,
 * naming nothing of the URL, when it is not a postgres URL — or when an `@` follows the host: a password
 * holding an unencoded `/` splits the URL there, and the rest of the password would be shown as a path.
 */
export function redactPostgresUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PostgresStoreError(
      "postgres_url_invalid",
      `storage url is not a valid URL (expected postgres://…; ${ENCODE_HINT})`,
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new PostgresStoreError(
      "postgres_url_invalid",
      `storage url scheme \`${parsed.protocol.replace(/:$/, "")}\` is not postgres (expected postgres://…)`,
    );
  }
  if (parsed.pathname.includes("@") || parsed.search.includes("@") || parsed.hash !== "") {
    throw new PostgresStoreError(
      "postgres_url_invalid",
      `storage url has an \`@\` or \`#\` after the host: ${ENCODE_HINT}`,
    );
  }
  if (parsed.password !== "") parsed.password = "***";
  for (const key of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAM.test(key)) parsed.searchParams.set(key, "***");
  }
  return parsed.toString();
}

function closedError(url: string): PostgresStoreError {
  return new PostgresStoreError("postgres_store_closed", `${url}: the postgres store is closed`);
}

/**
 * Opens a pool on `url` (`postgres://user:pass@host:port/db`), checks that the server answers
 * (`postgres_unavailable` otherwise, the password never shown) and applies the store's migrations
 * (`acp_migrations`, one transaction under an advisory lock, so several nodes may open at once).
 */
export async function openPostgresStore(url: string, options: OpenPostgresStoreOptions = {}): Promise<PostgresStore> {
  const safeUrl = redactPostgresUrl(url);
  // the driver is loaded when a store is opened: a program that never configures PostgreSQL never loads it
  const { default: driver } = await import("pg");
  const statementTimeout = Math.max(0, Math.floor(options.statementTimeoutMs ?? 30_000));
  const queryTimeout = Math.max(
    0,
    Math.floor(options.queryTimeoutMs ?? (statementTimeout > 0 ? statementTimeout + 5000 : 0)),
  );
  const config: ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    application_name: options.applicationName ?? "acp",
    statement_timeout: statementTimeout,
    // a node cut off mid-transaction must not hold its locks (the audit chain's, a rate limit's) until the
    // server's TCP keepalive notices, hours later: the server ends a session idle in a transaction this long (the statement timeout, at least 5 s)
    ...(statementTimeout > 0 ? { idle_in_transaction_session_timeout: Math.max(statementTimeout, 5000) } : {}),
    ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
    keepAlive: true,
    types: typesOf(driver),
  };
  /** A query this side gave up on (`query_timeout`): its connection is unusable, the database unreachable. */
  const unanswered = (err: unknown): unknown => {
    if (!(err instanceof Error) || err.message !== "Query read timeout") return err;
    const lost = new PostgresStoreError(
      "postgres_unavailable",
      `${safeUrl}: the database did not answer within ${queryTimeout} ms (cut off by the network?)`,
      { cause: err },
    );
    options.onConnectionError?.(lost);
    return lost;
  };
  const pool = new driver.Pool({ ...config, max: options.max ?? 10 });
  pool.on("error", (err) => options.onConnectionError?.(err));
  let closed = false;
  const store: PostgresStore = {
    url: safeUrl,
    get closed() {
      return closed;
    },
    query: <R extends QueryResultRow>(text: string, values?: readonly unknown[]) =>
      closed
        ? Promise.reject(closedError(safeUrl))
        : pool.query<R>(text, values === undefined ? [] : [...values]).catch((err: unknown) => {
            throw unanswered(err);
          }),
    transaction: async (fn) => {
      if (closed) throw closedError(safeUrl);
      const client = await pool.connect();
      // While checked out the pool does not listen for the connection's errors: without a listener, one
      // ended under us (a restarting server, an administrator) would throw from the socket's event and
      // take the process down. The statements fail instead, and the connection leaves the pool.
      let lost: Error | undefined;
      const onError = (err: Error): void => {
        lost ??= err;
        options.onConnectionError?.(err);
      };
      client.on("error", onError);
      try {
        await client.query("BEGIN");
        const result = await fn(client);
        await client.query("COMMIT");
        return result;
      } catch (err) {
        const given = unanswered(err);
        if (given !== err) {
          // the connection waits on a query that will not answer: it goes, unused (the server rolls back)
          lost ??= given as Error;
          throw given;
        }
        // a connection that cannot even roll back is in no state to serve the next caller
        await client.query("ROLLBACK").catch((failed: unknown) => {
          lost ??= failed instanceof Error ? failed : new Error(String(failed));
        });
        throw err;
      } finally {
        client.removeListener("error", onError);
        client.release(lost);
      }
    },
    connectDedicated: async () => {
      if (closed) throw closedError(safeUrl);
      const client = new driver.Client(config);
      // the owner adds its own listener (and reports); this one keeps a connection ended before then from throwing
      client.on("error", () => undefined);
      await client.connect();
      return client;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
  try {
    await pool.query("SELECT 1");
  } catch (err) {
    await store.close();
    throw new PostgresStoreError("postgres_unavailable", `${safeUrl}: cannot connect: ${messageOf(err)}`, {
      cause: err,
    });
  }
  try {
    const migrations = [...(options.migrate === false ? [] : POSTGRES_MIGRATIONS), ...(options.migrations ?? [])];
    if (migrations.length > 0) await applyPostgresMigrations(pool, migrations);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
