/** The console's links and sessions alone (for `acp console-link`), on SQLite or PostgreSQL. */
import { openPostgresStore, openStateDb } from "@acp/store";
import { SERVER_POSTGRES_MIGRATIONS } from "./postgres/migrations.js";
import { createPostgresConsoleAuthStore } from "./postgres/console-auth.js";
import { createSqliteConsoleAuthStore } from "./sqlite-console-auth.js";
import type { ConsoleAuthStore } from "./types.js";

/** An open console-auth store and how to close it. */
export interface ConsoleAuthHandle {
  readonly store: ConsoleAuthStore;
  close(): Promise<void>;
}

/** Opens the console-auth store: PostgreSQL when `storageUrl` is given, `statePath` (SQLite) otherwise. */
export async function openConsoleAuth(options: {
  readonly storageUrl?: string;
  readonly statePath: string;
}): Promise<ConsoleAuthHandle> {
  if (options.storageUrl !== undefined) {
    const pg = await openPostgresStore(options.storageUrl, { migrations: SERVER_POSTGRES_MIGRATIONS, max: 1 });
    return { store: createPostgresConsoleAuthStore(pg), close: () => pg.close() };
  }
  const db = openStateDb(options.statePath);
  try {
    return {
      store: createSqliteConsoleAuthStore(db),
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
