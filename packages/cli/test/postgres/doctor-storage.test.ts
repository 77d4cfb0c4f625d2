/** `acp doctor` checks that the PostgreSQL database `acp serve` would use answers — and changes nothing in it. */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";
import { runCli } from "../run.js";

const db = useTestDatabase();
const root = tempRoot("doctor-storage");
afterAll(root.cleanup);

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    return found.rows.map((r) => r.tablename);
  } finally {
    await client.end();
  }
}

describe("acp doctor with a PostgreSQL storage URL", () => {
  it("says the database of ACP_STORAGE_URL answers, without creating any table in it", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await runCli(["doctor", "--json"], { env: { ...envFor(home), ACP_STORAGE_URL: db.url } });
    const storage = (
      JSON.parse(r.stdout) as { checks: { status: string; name: string; detail: string }[] }
    ).checks.find((c) => c.name === "storage");
    expect(storage?.status).toBe("ok");
    expect(storage?.detail).toMatch(/^PostgreSQL postgres:\/\/.*\/acp_t_[0-9a-f]+ answers \(from ACP_STORAGE_URL\)$/);
    expect(await tables(db.url)).toEqual([]);
  });

  it("fails naming the database when it is not there", async () => {
    const { home } = fixtureHome(root.dir);
    const missing = new URL(db.url);
    missing.pathname = "/acp_no_such_database";
    const r = await runCli(["doctor"], { env: { ...envFor(home), ACP_STORAGE_URL: missing.toString() } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^fail {2}storage {2}ACP_STORAGE_URL: cannot reach PostgreSQL at postgres:\/\/.*acp_no_such_database.*does not exist/m,
    );
  });
});
