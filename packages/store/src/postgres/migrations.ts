import type { Pool } from "pg";
import type { PostgresStore } from "./open-postgres-store.js";
import { isMigrationId } from "../sqlite/index.js";
import { messageOf, PostgresStoreError } from "./postgres-store-error.js";
import { ADVISORY_LOCK } from "./schema.js";

/**
 * One schema change, applied once per database; ids follow the SQLite store's `<feature>/<NNN>-<what>`
 * and are recorded in the same `acp_migrations` table. `up` is SQL (several statements allowed).
 */
export interface PostgresMigration {
  readonly id: string;
  readonly up: string;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS acp_migrations (
  id         TEXT PRIMARY KEY,
  ord        BIGINT GENERATED ALWAYS AS IDENTITY,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
)`;

function assertIds(migrations: readonly PostgresMigration[]): void {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (!isMigrationId(m.id)) {
      throw new PostgresStoreError(
        "postgres_migration_failed",
        `migration id \`${m.id}\` is not \`<feature>/<NNN>-<what>\``,
      );
    }
    if (ids.has(m.id))
      throw new PostgresStoreError("postgres_migration_failed", `migration id \`${m.id}\` appears twice`);
    ids.add(m.id);
  }
}

/** A migration id's feature (`nonce` of `nonce/002-forgotten-mark`). */
const featureOf = (id: string): string => id.slice(0, id.indexOf("/"));

/**
 * The recorded ids of a feature this version migrates that it does not know: a newer version applied them,
 * and this one would run on tables whose rules it does not keep (an older node ignoring a newer mark).
 * Another program's features (`claim/…` beside `acp serve`'s) are its own business.
 */
function newerThanThis(done: ReadonlySet<string>, migrations: readonly PostgresMigration[]): string[] {
  const known = new Set(migrations.map((m) => m.id));
  const features = new Set(migrations.map((m) => featureOf(m.id)));
  return [...done].filter((id) => !known.has(id) && features.has(featureOf(id))).sort();
}

/**
 * Applies the migrations not yet recorded in `acp_migrations`, in order, in ONE transaction under an
 * advisory lock: nodes starting together wait for each other, none applies a migration twice, and a
 * failing migration leaves nothing behind (PostgreSQL DDL is transactional). Returns the ids applied now.
 * Refuses (`postgres_schema_newer`, nothing applied) a database on which a newer version applied a migration
 * of a feature this one migrates.
 */
export async function applyPostgresMigrations(pool: Pool, migrations: readonly PostgresMigration[]): Promise<string[]> {
  assertIds(migrations);
  const client = await pool.connect();
  const applied: string[] = [];
  let current = "";
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1, 0)", [ADVISORY_LOCK.migrations]);
    await client.query(CREATE_TABLE);
    const done = new Set((await client.query<{ id: string }>("SELECT id FROM acp_migrations")).rows.map((r) => r.id));
    const newer = newerThanThis(done, migrations);
    if (newer.length > 0) {
      throw new PostgresStoreError(
        "postgres_schema_newer",
        `the database's tables were made by a newer version of acp (migration ${newer.map((id) => `\`${id}\``).join(", ")} ` +
          "is not known to this one): run the version the other nodes run, or newer",
      );
    }
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      current = migration.id;
      await client.query(migration.up);
      await client.query("INSERT INTO acp_migrations (id) VALUES ($1)", [migration.id]);
      applied.push(migration.id);
    }
    await client.query("COMMIT");
    return applied;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    if (err instanceof PostgresStoreError && err.code === "postgres_schema_newer") throw err;
    const which = current === "" ? "migrations" : `migration \`${current}\``;
    throw new PostgresStoreError("postgres_migration_failed", `${which} failed: ${messageOf(err)}`, { cause: err });
  } finally {
    client.release();
  }
}

/** The ids recorded in `acp_migrations`, in the order applied (empty before the first migration). */
export async function listPostgresMigrations(store: Pick<PostgresStore, "query">): Promise<string[]> {
  const exists = await store.query<{ t: string | null }>("SELECT to_regclass('acp_migrations')::text AS t");
  if (exists.rows[0]?.t == null) return [];
  const rows = await store.query<{ id: string }>("SELECT id FROM acp_migrations ORDER BY ord");
  return rows.rows.map((r) => r.id);
}
