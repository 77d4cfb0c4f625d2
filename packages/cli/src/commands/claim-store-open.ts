import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  CLAIM_MIGRATIONS,
  createSecretBox,
  PostgresClaimStore,
  SqliteClaimStore,
  type ClaimStore,
  type SecretBox,
} from "@acp/claim";
import { applyMigrations, openStateDb } from "@acp/store";
import { resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openPostgres, readProviderKey } from "./claim-config.js";
import { storageOf } from "./serve.js";

/** Where an operator command finds the provider's state: the same flags and precedence as `acp claim serve`. */
export interface ClaimStoreFlags {
  db?: string;
  storageUrl?: string;
}

/**
 * What an operator command needs of the provider key: `provider` to find what the provider stored under its
 * keyed hashes (a handle), `none` for reputation scores, which are kept by range or subject in clear.
 */
export type ProviderKeyNeed = "provider" | "none";

/**
 * The provider's SQLite database, which must exist: an operator command reads or changes what a provider
 * stored, so it never creates a home or an empty database (a wrong `ACP_HOME` or `--db` is an error instead).
 */
function existingStateDb(ctx: CliContext, home: string, flags: ClaimStoreFlags): string {
  if (flags.db !== undefined) {
    const path = resolvePath(ctx.io, flags.db);
    if (!existsSync(path)) throw new CliError(`--db: \`${path}\` does not exist`, EXIT.error);
    return path;
  }
  const hint = "run it with the provider's ACP_HOME, or give --db or --storage-url";
  if (!existsSync(home)) throw new CliError(`no ACP home at \`${home}\`: ${hint}`, EXIT.error);
  const path = join(home, "state.db");
  if (!existsSync(path)) throw new CliError(`no claim provider state at \`${path}\`: ${hint}`, EXIT.error);
  return path;
}

/**
 * Opens the provider's claim store (SQLite `--db` or `$ACP_HOME/state.db`, or PostgreSQL by `--storage-url`,
 * `ACP_STORAGE_URL`, `storage.url`), with its provider key when `key` is `provider`, runs `fn`, and closes it.
 * Nothing is created: neither a home, a database nor a key. The running provider may keep serving meanwhile.
 */
export async function withClaimStore<T>(
  ctx: CliContext,
  home: string,
  flags: ClaimStoreFlags,
  key: ProviderKeyNeed,
  fn: (store: ClaimStore) => Promise<T>,
): Promise<T> {
  const storage = storageOf(ctx, flags, home);
  if (storage !== null && flags.db !== undefined)
    throw new CliError(`--db and ${storage.source} both given: pick SQLite or PostgreSQL`, EXIT.usage);
  // without a key need, the store's keyed hashes are never used: a throwaway key stands in, kept nowhere
  const box = (): SecretBox => createSecretBox(key === "provider" ? readProviderKey(home) : randomBytes(32));
  if (storage !== null) {
    const secrets = box();
    const pg = await openPostgres(storage.url, storage.source);
    try {
      return await fn(new PostgresClaimStore(pg, secrets));
    } finally {
      await pg.close();
    }
  }
  const path = existingStateDb(ctx, home, flags);
  const secrets = box();
  const db = openStateDb(path);
  try {
    applyMigrations(db, CLAIM_MIGRATIONS);
    return await fn(new SqliteClaimStore(db, secrets));
  } finally {
    db.close();
  }
}
