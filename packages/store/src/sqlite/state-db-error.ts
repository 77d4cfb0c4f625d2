/**
 * The error of an unsafe `state.db`, in a module of its own: `acp`'s entry checks for it on every command's way
 * out (`@acp/store/state-db-error`) without loading the store.
 */

/**
 * Thrown by `openStateDb` when `state.db` (or its `-wal`, `-shm`) is not a regular file the user owns: a
 * symbolic link planted by someone who can write the home (SQLite would write the state into its target), a
 * named pipe (opening it would hang), a file of another user, a file with another name too (a hard link), a
 * file swapped in while it was opened. Code `state_db_unsafe`.
 */
export class StateDbUnsafeError extends Error {
  readonly code = "state_db_unsafe";
  constructor(message: string) {
    super(message);
    this.name = "StateDbUnsafeError";
  }
}
