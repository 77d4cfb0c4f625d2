import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  CLAIM_MIGRATIONS,
  CLAIM_POSTGRES_MIGRATIONS,
  createSecretBox,
  PostgresClaimStore,
  SqliteClaimStore,
  type ClaimStore,
  type SecretBox,
} from "@acp/claim";
import {
  applyMigrations,
  listAppliedMigrations,
  listPostgresMigrations,
  openPostgresStore,
  openStateDb,
  type PostgresStore,
} from "@acp/store";
import { resolvePath, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openPostgres, readProviderKey } from "./claim-config.js";
import { assertClaimSchemaCurrent } from "./claim-schema.js";
import { storageOf } from "./storage-url.js";

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
 * How an operator command uses the store. `read`: it only reads, so it changes nothing, not even the schema (SQLite
 * is opened read-only, PostgreSQL sees no DDL) and it stops (exit 1) unless the claim schema is the one this build
 * knows. `write`: it changes what the provider stored, and first applies the claim migrations as `acp claim serve`
 * does (a database an older provider made is migrated).
 */
export type ClaimStoreAccess = "read" | "write";

/** What an operator command needs of the provider's store. */
export interface ClaimStoreNeeds {
  readonly key: ProviderKeyNeed;
  readonly access: ClaimStoreAccess;
}

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
  // not `isExistingHome`: `acp claim serve` needs no `acp init`, so a provider's home may hold only state.db
  // and claim/; what must exist here is the provider's database, checked below
  if (!existsSync(home)) throw new CliError(`no ACP home at \`${home}\`: ${hint}`, EXIT.error);
  const path = join(home, "state.db");
  if (!existsSync(path)) throw new CliError(`no claim provider state at \`${path}\`: ${hint}`, EXIT.error);
  return path;
}

/** Opens PostgreSQL for a read: no DDL (neither the store's migrations nor the claim ones); the schema is checked. */
async function openPostgresForRead(url: string, source: string): Promise<PostgresStore> {
  let pg: PostgresStore;
  try {
    pg = await openPostgresStore(url, { applicationName: "acp-claim", migrate: false });
  } catch (err) {
    throw new CliError(`${source}: ${err instanceof Error ? err.message : String(err)}`, EXIT.error);
  }
  try {
    assertClaimSchemaCurrent(pg.url, await listPostgresMigrations(pg), CLAIM_POSTGRES_MIGRATIONS);
    return pg;
  } catch (err) {
    await pg.close();
    throw err;
  }
}

/**
 * Opens the provider's claim store (SQLite `--db` or `$ACP_HOME/state.db`, or PostgreSQL by `--storage-url`,
 * `ACP_STORAGE_URL`, `storage.url`), with its provider key when `needs.key` is `provider`, runs `fn`, and closes it.
 * Nothing is created: neither a home, a database nor a key. The running provider may keep serving meanwhile.
 * With `needs.access` `read` the store is opened without migrating (see {@link ClaimStoreAccess}).
 */
export async function withClaimStore<T>(
  ctx: CliContext,
  home: string,
  flags: ClaimStoreFlags,
  needs: ClaimStoreNeeds,
  fn: (store: ClaimStore) => Promise<T>,
): Promise<T> {
  const storage = storageOf(ctx, flags, home);
  if (storage !== null && flags.db !== undefined)
    throw new CliError(`--db and ${storage.source} both given: pick SQLite or PostgreSQL`, EXIT.usage);
  const read = needs.access === "read";
  // without a key need, the store's keyed hashes are never used: a throwaway key stands in, kept nowhere
  const box = (): SecretBox => createSecretBox(needs.key === "provider" ? readProviderKey(home) : randomBytes(32));
  if (storage !== null) {
    const secrets = box();
    const pg = read
      ? await openPostgresForRead(storage.url, storage.source)
      : await openPostgres(storage.url, storage.source);
    try {
      return await fn(new PostgresClaimStore(pg, secrets));
    } finally {
      await pg.close();
    }
  }
  const path = existingStateDb(ctx, home, flags);
  const secrets = box();
  // read-only, SQLite still makes the empty `-wal` and `-shm` files a WAL reader needs when none exist (no page of
  // the database is written), and cannot remove them on close as a writer does
  const db = openStateDb(path, { readonly: read });
  try {
    if (read) assertClaimSchemaCurrent(path, listAppliedMigrations(db), CLAIM_MIGRATIONS);
    else applyMigrations(db, CLAIM_MIGRATIONS);
    return await fn(new SqliteClaimStore(db, secrets));
  } finally {
    db.close();
  }
}
