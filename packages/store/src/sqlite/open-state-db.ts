import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
  type Stats,
} from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { applyMigrations, type StateDbMigration } from "./migrations.js";
import { StateDbUnsafeError } from "./state-db-error.js";

export { StateDbUnsafeError };

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
  // another name for the same file: SQLite keeps a -wal and a lock per name, so two names corrupt it, and
  // whoever made the link chose which file the state goes into
  if (st.nlink > 1) {
    throw new StateDbUnsafeError(
      `\`${path}\` has ${st.nlink} names (a hard link to another file): ${HOME_FILE_RULE} with one name (copy it to a file of its own)`,
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

/** The file checked before SQLite opens it: held open (so its inode is not reused) until SQLite has opened it. */
interface CheckedFile {
  readonly fd: number;
  readonly dev: number;
  readonly ino: number;
}

/**
 * Checks the database file and its `-wal` and `-shm` before SQLite opens them: each, when there, must be a
 * regular file this user owns. Unless `readonly`, creates the database 0600 whatever the umask (SQLite then
 * creates `-wal` and `-shm` with the database's mode). Returns the database file, still open (undefined:
 * read-only and not there).
 */
function checkStateDbFiles(path: string, readonly: boolean): CheckedFile | undefined {
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
    if (readonly && (err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    assertOwnRegularFile(path, st);
    if (created) {
      fchmodSync(fd, 0o600);
      giveToDirectoryOwner(fd, path);
    }
    checkCompanions(path);
    return { fd, dev: st.dev, ino: st.ino };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Root creating the database in a directory of another user (`sudo -E acp run` with a person's home, for
 * network namespaces) gives it to that user: a file root kept would be refused to the person's own
 * processes (another user's file). SQLite gives its `-wal` and `-shm` the database's owner itself.
 */
function giveToDirectoryOwner(fd: number, path: string): void {
  if (process.getuid?.() !== 0) return;
  const dir = statSync(dirname(path));
  if (dir.uid !== 0) fchownSync(fd, dir.uid, dir.gid);
}

/** `-wal` and `-shm`, when there, must each be a regular file this user owns. */
function checkCompanions(path: string): void {
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

const PROC_FDS = "/proc/self/fd";

/**
 * Whether a descriptor of this process besides the checked one is open on the checked file (Linux);
 * undefined where `/proc/self/fd` cannot be read.
 */
function otherFdOpenOn(file: CheckedFile): boolean | undefined {
  if (process.platform !== "linux") return undefined;
  let fds: string[];
  try {
    fds = readdirSync(PROC_FDS);
  } catch {
    return undefined;
  }
  for (const name of fds) {
    const fd = Number(name);
    if (fd === file.fd || !Number.isInteger(fd)) continue;
    try {
      const st = fstatSync(fd);
      if (st.dev === file.dev && st.ino === file.ino) return true;
    } catch {
      // closed meanwhile (the listing's own descriptor, another part's file)
    }
  }
  return false;
}

/**
 * After SQLite opened `path`: the file it opened must be the one checked. Someone who can write the
 * directory could swap another file (or a link) in at the name between the check and SQLite's open, and
 * back. So: the name must still be that file (`lstat`: same device and inode); and on Linux a descriptor
 * besides the checked one (held open throughout, so no other file can take its inode) must be open on it:
 * SQLite's. (Where the process already had the file open, that says less: the `lstat` still holds.) Also
 * the `-wal` and `-shm`, as before.
 */
function assertOpenedChecked(path: string, checked: CheckedFile): void {
  const swapped = `\`${path}\` was replaced while it was being opened: ${HOME_FILE_RULE}, and only you may write the home`;
  let now: Stats;
  try {
    now = lstatSync(path);
  } catch {
    throw new StateDbUnsafeError(swapped);
  }
  assertOwnRegularFile(path, now);
  if (now.dev !== checked.dev || now.ino !== checked.ino) throw new StateDbUnsafeError(swapped);
  if (otherFdOpenOn(checked) === false) throw new StateDbUnsafeError(swapped);
  checkCompanions(path);
}

/**
 * Test seams (not exported by the package): `beforeSqliteOpen` runs between the check of `state.db` and
 * SQLite's open of it, `afterSqliteOpen` between that open and the check that SQLite opened the file checked.
 */
export const stateDbOpenHooks: {
  beforeSqliteOpen?: (path: string) => void;
  afterSqliteOpen?: (path: string) => void;
} = {};

/**
 * Opens (creating if needed) the SQLite state database, `$ACP_HOME/state.db`: WAL journal (readers never
 * block the one writer; several processes share the file), `synchronous = FULL` (a committed spent
 * nonce or approval survives a power cut), `busy_timeout`, foreign keys on, file mode 0600 in a 0700
 * directory. The file and its `-wal` and `-shm` must each be a regular file this user owns: a symbolic link, a
 * pipe or another user's file is refused ({@link StateDbUnsafeError}), and so is a file swapped in at the
 * name between that check and SQLite's open (the file SQLite opened must be the one checked: same device
 * and inode, found among the descriptors SQLite opened on Linux). Creates the `acp_migrations` table,
 * then applies `options.migrations`. Pass `:memory:` for a private in-memory database (tests). The caller
 * closes it with `db.close()`.
 */
export function openStateDb(path: string, options: OpenStateDbOptions = {}): Database {
  return openStateDbOnce(path, options, true);
}

function openStateDbOnce(path: string, options: OpenStateDbOptions, again: boolean): Database {
  const readonly = options.readonly === true;
  let checked: CheckedFile | undefined;
  let db: Database;
  if (path === ":memory:") db = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
  else {
    if (!readonly) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    checked = checkStateDbFiles(path, readonly);
    try {
      stateDbOpenHooks.beforeSqliteOpen?.(path);
      db = new BetterSqlite3(path, { readonly, fileMustExist: readonly });
      try {
        stateDbOpenHooks.afterSqliteOpen?.(path);
        if (checked !== undefined) assertOpenedChecked(path, checked);
        else if (again) {
          // read-only, and the file appeared between the check and the open: check what is there now
          db.close();
          return openStateDbOnce(path, options, false);
        } else throw new StateDbUnsafeError(`\`${path}\` appeared while it was being opened: ${HOME_FILE_RULE}`);
      } catch (err) {
        if (db.open) db.close();
        throw err;
      }
    } finally {
      if (checked !== undefined) closeSync(checked.fd);
    }
  }
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

/**
 * Whether anything is at `path`, as a reader deciding "no database yet" must ask: a symbolic link counts,
 * dangling or not (`existsSync` follows it and says false, so a dangling `state.db` link read as "nothing
 * pending"); {@link openStateDb} then refuses it (`state_db_unsafe`). Throws when the name cannot be
 * looked at (`EACCES`).
 */
export function stateDbPresent(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}
