import { join } from "node:path";
import { CLAIM_MIGRATIONS, createSecretBox, PostgresClaimStore, SqliteClaimStore, type ClaimStore } from "@acp/claim";
import { applyMigrations, openStateDb } from "@acp/store";
import { resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openPostgres, providerKey } from "./claim-config.js";
import { storageOf } from "./serve.js";

/** Where an operator command finds the provider's state: the same flags and precedence as `acp claim serve`. */
export interface ClaimStoreFlags {
  db?: string;
  storageUrl?: string;
}

/**
 * Opens the provider's claim store (SQLite `--db` or `$ACP_HOME/state.db`, or PostgreSQL by `--storage-url`,
 * `ACP_STORAGE_URL`, `storage.url`) with its provider key, runs `fn`, and closes it. The running provider may
 * keep serving meanwhile.
 */
export async function withClaimStore<T>(
  ctx: CliContext,
  home: string,
  flags: ClaimStoreFlags,
  fn: (store: ClaimStore) => Promise<T>,
): Promise<T> {
  const storage = storageOf(ctx, flags, home);
  if (storage !== null && flags.db !== undefined)
    throw new CliError(`--db and ${storage.source} both given: pick SQLite or PostgreSQL`, EXIT.usage);
  const box = createSecretBox(providerKey(home));
  if (storage !== null) {
    const pg = await openPostgres(storage.url, storage.source);
    try {
      return await fn(new PostgresClaimStore(pg, box));
    } finally {
      await pg.close();
    }
  }
  const db = openStateDb(flags.db !== undefined ? resolvePath(ctx.io, flags.db) : join(home, "state.db"));
  try {
    applyMigrations(db, CLAIM_MIGRATIONS);
    return await fn(new SqliteClaimStore(db, box));
  } finally {
    db.close();
  }
}
