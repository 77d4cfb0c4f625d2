import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { applyMigrations, type StateDbMigration } from "./migrations.js";

/** How long a statement waits for another process's write lock before failing (ms). */
export const STATE_DB_BUSY_TIMEOUT_MS = 5000;

/** Options of {@link openStateDb}. */
export interface OpenStateDbOptions {
  /** Migrations to apply right away (each module can also call {@link applyMigrations} itself). */
  readonly migrations?: readonly StateDbMigration[];
  /** Wait for a busy database this long (default {@link STATE_DB_BUSY_TIMEOUT_MS}). */
  readonly busyTimeoutMs?: number;
  /** Open an existing database read-only (no migrations may be given). */
  readonly readonly?: boolean;
}

/**
 * Opens (creating if needed) the SQLite state database, `$ACP_HOME/state.db`: WAL journal (readers never
 * block the one writer; several processes share the file), `synchronous = FULL` (a committed spent
 * nonce or approval survives a power cut), `busy_timeout`, foreign keys on, file mode 0600 in a 0700
 * directory. Creates the `acp_migrations` table, then applies `options.migrations`. Pass `:memory:`
 * for a private in-memory database (tests). The caller closes it with `db.close()`.
 */
export function openStateDb(path: string, options: OpenStateDbOptions = {}): Database {
  const readonly = options.readonly === true;
  if (path !== ":memory:" && !readonly) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, "a", 0o600));
  }
  const db = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? STATE_DB_BUSY_TIMEOUT_MS))}`);
    if (!readonly) {
      if (!db.memory) db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("foreign_keys = ON");
      applyMigrations(db, options.migrations ?? []);
    } else if (options.migrations !== undefined && options.migrations.length > 0) {
      throw new Error("cannot apply migrations to a database opened read-only");
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
