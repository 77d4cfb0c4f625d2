import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { isExistingHome, openStateDb } from "@acp/store";

/** The state a long-running command shares across its parts: `$ACP_HOME/state.db`, opened once. */
export interface HomeState {
  readonly home: string;
  /**
   * Whether `$ACP_HOME` holds a home (a config, a policy, keys or a vault: `isExistingHome`); otherwise everything is kept
   * in memory and a warning is printed. A directory holding only what a proxy run before `acp init` left
   * there (`pins.json`) is not one: no state.db or audit log is started in it.
   */
  readonly exists: boolean;
  /** The state database, opened on first use; null without a home. */
  db(): Database | null;
  close(): void;
}

/** Opens (lazily) the state of a home. */
export function openHomeState(home: string): HomeState {
  const exists = isExistingHome(home);
  let db: Database | null = null;
  return {
    home,
    exists,
    db() {
      if (!exists) return null;
      db ??= openStateDb(join(home, "state.db"));
      return db;
    },
    close() {
      db?.close();
      db = null;
    },
  };
}
