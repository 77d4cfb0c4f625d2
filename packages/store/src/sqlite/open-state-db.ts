import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, type Stats } from "node:fs";
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
 * Thrown by {@link openStateDb} when `state.db` (or its `-wal`, `-shm`) is not a regular file the user owns: a
 * symbolic link planted by someone who can write the home (SQLite would write the state into its target), a
 * named pipe (opening it would hang), a file of another user. Code `state_db_unsafe`.
 */
export class StateDbUnsafeError extends Error {
  readonly code = "state_db_unsafe";
  constructor(message: string) {
    super(message);
    this.name = "StateDbUnsafeError";
  }
}

const HOME_FILE_RULE = "a home file must be a regular file you own";

/**
 * Refuses a file that is not a regular file owned by this user (no check of the owner on Windows; root may
 * use a file of any owner, as `sudo -E acp run` does with the person's home).
 */
function assertOwnRegularFile(path: string, st: Stats): void {
  if (st.isSymbolicLink())
    throw new StateDbUnsafeError(`\`${path}\` is a symbolic link: ${HOME_FILE_RULE} (remove it)`);
  if (!st.isFile()) {
    throw new StateDbUnsafeError(
      `\`${path}\` is not a regular file (a pipe, a socket or a device): ${HOME_FILE_RULE} (remove it)`,
    );
  }
  const uid = process.getuid?.();
  // root may use a person's home (`sudo -E acp run` for network namespaces): its files are that person's
  if (uid !== undefined && uid !== 0 && st.uid !== uid) {
    throw new StateDbUnsafeError(`\`${path}\` is owned by uid ${st.uid}, not you: ${HOME_FILE_RULE}`);
  }
}

// never following a link at the name, never waiting on a pipe
const NO_FOLLOW = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens `path` without following a link or waiting on a pipe; `ELOOP` (a link) is said as such. */
function openNoFollow(path: string, flags: number): number {
  try {
    return openSync(path, flags | NO_FOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") {
      throw new StateDbUnsafeError(`\`${path}\` is a symbolic link: ${HOME_FILE_RULE} (remove it)`);
    }
    throw err;
  }
}

/**
 * Checks the database file and its `-wal` and `-shm` before SQLite opens them: each, when there, must be a
 * regular file this user owns. Unless `readonly`, creates the database 0600 whatever the umask (SQLite then
 * creates `-wal` and `-shm` with the database's mode).
 */
function checkStateDbFiles(path: string, readonly: boolean): void {
  let fd: number | undefined;
  let created = false;
  if (!readonly) {
    try {
      fd = openNoFollow(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL);
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  try {
    fd ??= openNoFollow(path, readonly ? constants.O_RDONLY : constants.O_RDWR);
  } catch (err) {
    // read-only and not there: SQLite says so (fileMustExist)
    if (readonly && (err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    assertOwnRegularFile(path, fstatSync(fd));
    if (created) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
  for (const companion of [`${path}-wal`, `${path}-shm`]) {
    let st: Stats;
    try {
      st = lstatSync(companion);
    } catch {
      continue;
    }
    assertOwnRegularFile(companion, st);
  }
}

/**
 * Opens (creating if needed) the SQLite state database, `$ACP_HOME/state.db`: WAL journal (readers never
 * block the one writer; several processes share the file), `synchronous = FULL` (a committed spent
 * nonce or approval survives a power cut), `busy_timeout`, foreign keys on, file mode 0600 in a 0700
 * directory. The file and its `-wal` and `-shm` must each be a regular file this user owns: a symbolic link, a
 * pipe or another user's file is refused ({@link StateDbUnsafeError}). Creates the `acp_migrations` table,
 * then applies `options.migrations`. Pass `:memory:` for a private in-memory database (tests). The caller
 * closes it with `db.close()`.
 */
export function openStateDb(path: string, options: OpenStateDbOptions = {}): Database {
  const readonly = options.readonly === true;
  if (path !== ":memory:") {
    if (!readonly) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    checkStateDbFiles(path, readonly);
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
