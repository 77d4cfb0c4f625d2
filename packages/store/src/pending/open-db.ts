import type { Database } from "better-sqlite3";
import { openStateDb } from "../sqlite/index.js";
import { ensurePendingConsentSchema } from "./schema.js";

/**
 * Opens (creating if needed) the state database at `path` through `openStateDb` (WAL, busy timeout, 0600) and
 * makes sure the pending-consent table exists. The caller closes it.
 */
export function openPendingConsentDb(path: string): Database {
  const db = openStateDb(path);
  try {
    ensurePendingConsentSchema(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
