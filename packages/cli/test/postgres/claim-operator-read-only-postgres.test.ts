import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { CLAIM_POSTGRES_MIGRATIONS, openClaimPostgres } from "@acp/claim";
import { listPostgresMigrations, openPostgresStore } from "@acp/store";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { runCli } from "../run.js";

const NOW = new Date("2026-01-15T12:00:00Z");
const LAST = CLAIM_POSTGRES_MIGRATIONS.at(-1)?.id ?? "";
const BEFORE_LAST = CLAIM_POSTGRES_MIGRATIONS.at(-2)?.id ?? "";

let db: TestDatabase | undefined;
let role: string | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await db?.drop();
  db = undefined;
  if (role !== undefined) await sql(postgresTestUrl(), `DROP ROLE IF EXISTS ${role}`);
  role = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

function env(): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), "acp-claim-read-pg-"));
  dirs.push(home);
  return { HOME: home, ACP_HOME: home };
}

/** The migration ids and tables of the database: what DDL would change. */
async function schemaOf(url: string): Promise<{ ids: string[]; tables: string[] }> {
  const store = await openPostgresStore(url, { migrate: false });
  try {
    const tables = await store.query<{ t: string }>(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    return { ids: await listPostgresMigrations(store), tables: tables.rows.map((r) => r.t) };
  } finally {
    await store.close();
  }
}

describe("acp claim reputation reads the provider's PostgreSQL without DDL", () => {
  it("reads a current provider database as a role that may only SELECT", async () => {
    db = await createTestDatabase();
    const store = await openClaimPostgres(db.url);
    await store.query("INSERT INTO claim_reputation (key, score, updated_at) VALUES ($1, $2, $3)", [
      "range:203.0.113.0/24",
      40,
      NOW.getTime(),
    ]);
    await store.close();
    role = `acp_ro_${randomBytes(4).toString("hex")}`;
    const dbName = new URL(db.url).pathname.slice(1);
    await sql(db.url, `CREATE ROLE ${role} LOGIN`);
    await sql(db.url, `GRANT CONNECT ON DATABASE ${dbName} TO ${role}`);
    await sql(db.url, `GRANT USAGE ON SCHEMA public TO ${role}`);
    await sql(db.url, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    const readerUrl = new URL(db.url);
    readerUrl.username = role;
    const before = await schemaOf(db.url);
    const out = await runCli(["claim", "reputation", "203.0.113.7", "--storage-url", readerUrl.toString(), "--json"], {
      env: env(),
      now: NOW,
    });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ sources: [{ key: "range:203.0.113.0/24", score: 40 }] });
    expect(await schemaOf(db.url)).toEqual(before);
  });

  it("refuses (exit 1) a database whose claim schema is older, naming both versions, and runs no DDL on it", async () => {
    db = await createTestDatabase();
    await (await openPostgresStore(db.url, { migrations: CLAIM_POSTGRES_MIGRATIONS.slice(0, -1) })).close();
    const before = await schemaOf(db.url);
    const out = await runCli(["claim", "reputation", "203.0.113.7"], {
      env: { ...env(), ACP_STORAGE_URL: db.url },
      now: NOW,
    });
    expect(out.stdout).toBe("");
    expect(out.stderr).toBe(
      `acp: \`${db.url}\`: claim schema is at \`${BEFORE_LAST}\` and this acp expects \`${LAST}\`: read it with the acp of the provider's version, or run \`acp claim serve\` of this version once to migrate it (a read never migrates)\n`,
    );
    expect(out.code).toBe(1);
    expect(await schemaOf(db.url)).toEqual(before);
    // still older after the read: the last migration (whatever it creates) was not applied
    expect(before.ids).not.toContain(LAST);
  });
});
