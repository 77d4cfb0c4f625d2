/**
 * The store's PostgreSQL functions run with a pinned `search_path`. `acp_rate_limit_consume` had none, so it
 * resolved its table and the built-ins it calls through the caller's: a temporary table `rate_limit_hits`
 * (`pg_temp` comes first for tables unless named) or an object in a schema earlier in the path was used in
 * place of the store's, and the shared limit could be sidestepped. Migration
 * `rate-limit/003-consume-search-path` pins it to `pg_catalog, <its schema>, pg_temp`.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const open: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

async function opened(): Promise<PostgresStore> {
  const store = await openPostgresStore(db.url);
  open.push(store);
  return store;
}

describe("the search_path of the store's PostgreSQL functions", () => {
  it("is set on every function the migrations create (pg_proc.proconfig), to pg_catalog, the schema, pg_temp", async () => {
    const store = await opened();
    const { rows } = await store.query<{ name: string; schema: string; config: string[] | null }>(
      `SELECT p.proname AS name, n.nspname AS schema, p.proconfig AS config
         FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
        ORDER BY p.proname`,
    );
    expect(rows.map((r) => r.name)).toContain("acp_rate_limit_consume");
    for (const row of rows) {
      expect({ name: row.name, config: row.config }).toEqual({
        name: row.name,
        config: [`search_path=pg_catalog, ${row.schema}, pg_temp`],
      });
    }
  });

  it("names the schema the store was created in, when that is not public", async () => {
    const admin = await opened();
    await admin.query("CREATE SCHEMA acp_elsewhere");
    const url = new URL(db.url);
    url.searchParams.set("options", "-c search_path=acp_elsewhere");
    const store = await openPostgresStore(url.toString());
    open.push(store);
    const { rows } = await store.query<{ config: string[] | null }>(
      `SELECT p.proconfig AS config FROM pg_catalog.pg_proc p
         JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'acp_elsewhere' AND p.proname = 'acp_rate_limit_consume'`,
    );
    expect(rows).toEqual([{ config: ["search_path=pg_catalog, acp_elsewhere, pg_temp"] }]);
    expect((await store.query("SELECT * FROM acp_rate_limit_consume('k', 1, 60000, 0)")).rows[0]).toMatchObject({
      allowed: true,
    });
    const counted = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM acp_elsewhere.rate_limit_hits");
    expect(counted.rows[0]?.n).toBe(1);
  });

  it("so a temporary table of the caller named rate_limit_hits does not stand in for the store's", async () => {
    const store = await opened();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query("CREATE TEMP TABLE rate_limit_hits (key TEXT, at_ms BIGINT, expires_at_ms BIGINT)");
      const consume = () =>
        client.query<{ allowed: boolean }>("SELECT * FROM acp_rate_limit_consume('policy:send', 1, 60000, 1000)");
      expect((await consume()).rows[0]?.allowed).toBe(true);
      // the second call is over the limit of 1: the first one was counted in the store's table
      expect((await consume()).rows[0]?.allowed).toBe(false);
      expect(
        (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_temp.rate_limit_hits")).rows[0]?.n,
      ).toBe(0);
    } finally {
      await client.end();
    }
    const stored = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM public.rate_limit_hits");
    expect(stored.rows[0]?.n).toBe(1);
  });
});
