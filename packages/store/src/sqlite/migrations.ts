import type { Database } from "better-sqlite3";

/**
 * One schema change, applied once per database. `id` is unique across ACP and never reused; name it
 * `<feature>/<NNN>-<what>` (`rate-limit/001-hits`). `up` is SQL (several statements allowed) or a
 * synchronous function. A migration is never edited after it ships: add a new one instead.
 */
export interface StateDbMigration {
  readonly id: string;
  readonly up: string | ((db: Database) => void);
}

const ID = /^[a-z0-9][a-z0-9_-]*\/[0-9]{3}-[a-z0-9_-]+$/;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS acp_migrations (
  id         TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT`;

/** Whether an id follows `<feature>/<NNN>-<what>`. */
export function isMigrationId(id: string): boolean {
  return ID.test(id);
}

/**
 * Applies the migrations not yet recorded in `acp_migrations`, in the order given, each in its own
 * `BEGIN IMMEDIATE` transaction together with its record, so two processes opening the same file
 * never apply one twice and a failing migration leaves nothing behind. Idempotent. Returns the ids
 * applied now. Throws on a malformed or duplicated id, or when a migration fails.
 */
export function applyMigrations(db: Database, migrations: readonly StateDbMigration[]): string[] {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (!isMigrationId(m.id)) throw new Error(`migration id \`${m.id}\` is not \`<feature>/<NNN>-<what>\``);
    if (ids.has(m.id)) throw new Error(`migration id \`${m.id}\` appears twice`);
    ids.add(m.id);
  }
  db.exec(CREATE_TABLE);
  const isApplied = db.prepare<[string], { id: string }>("SELECT id FROM acp_migrations WHERE id = ?");
  const record = db.prepare<[string]>("INSERT INTO acp_migrations (id) VALUES (?)");
  const applied: string[] = [];
  for (const migration of migrations) {
    const run = db.transaction(() => {
      if (isApplied.get(migration.id) !== undefined) return false;
      if (typeof migration.up === "string") db.exec(migration.up);
      else migration.up(db);
      record.run(migration.id);
      return true;
    });
    try {
      if (run.immediate()) applied.push(migration.id);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(`migration \`${migration.id}\` failed: ${message}`, { cause: err });
    }
  }
  return applied;
}

/** The ids recorded in `acp_migrations`, oldest first. */
export function listAppliedMigrations(db: Database): string[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'acp_migrations'").get();
  if (table === undefined) return [];
  return db
    .prepare<[], { id: string }>("SELECT id FROM acp_migrations ORDER BY applied_at, rowid")
    .all()
    .map((r) => r.id);
}
