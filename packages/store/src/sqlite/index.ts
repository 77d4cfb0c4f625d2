/** The SQLite state database (`state.db`) and its migrations runner; other modules add their tables. */
export {
  openStateDb,
  stateDbPresent,
  StateDbUnsafeError,
  STATE_DB_BUSY_TIMEOUT_MS,
  type OpenStateDbOptions,
} from "./open-state-db.js";
export { applyMigrations, isMigrationId, listAppliedMigrations, type StateDbMigration } from "./migrations.js";
