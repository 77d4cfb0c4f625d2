/** Opening the PostgreSQL store: migrations, bad URLs, an unreachable server, a closed store, bad input. */
import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresRateLimiter,
  listPostgresMigrations,
  MAX_CONSENT_ID_LENGTH,
  openPostgresStore,
  POSTGRES_MIGRATIONS,
  redactPostgresUrl,
  type PostgresStore,
} from "../../src/index.js";
import { pendingRow } from "../cases/pending-store.case.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");
const dbs: TestDatabase[] = [];
let shared: PostgresStore | undefined;

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One store for the bad-input tests, opened on first use (a failure fails the test that asks). */
async function sharedStore(): Promise<PostgresStore> {
  shared ??= await openPostgresStore((await freshDatabase()).url);
  return shared;
}

afterAll(async () => {
  await shared?.close();
  for (const db of dbs) await db.drop();
});

describe("opening the postgres store", () => {
  it("applies every migration once, also when several nodes open a fresh database at the same moment", async () => {
    const db = await freshDatabase();
    const stores = await Promise.all([1, 2, 3].map((i) => openPostgresStore(db.url, { applicationName: `open-${i}` })));
    const ids = POSTGRES_MIGRATIONS.map((m) => m.id);
    expect(await listPostgresMigrations(stores[0] as PostgresStore)).toEqual(ids);
    const again = await openPostgresStore(db.url);
    const rows = await again.query<{ n: number }>("SELECT count(*)::int AS n FROM acp_migrations");
    expect(rows.rows[0]?.n).toBe(ids.length);
    await Promise.all([...stores, again].map((s) => s.close()));
  });

  it("leaves nothing behind when a migration fails, and names it", async () => {
    const db = await freshDatabase();
    await openPostgresStore(db.url).then((s) => s.close());
    const bad = { id: "test/001-bad", up: "CREATE TABLE half_done (x int); SELECT no_such_function();" };
    await expect(openPostgresStore(db.url, { migrations: [bad] })).rejects.toMatchObject({
      code: "postgres_migration_failed",
      message: expect.stringContaining("migration `test/001-bad` failed") as unknown,
    });
    const check = await openPostgresStore(db.url);
    expect((await check.query("SELECT to_regclass('half_done') AS t")).rows[0]).toEqual({ t: null });
    expect((await check.query("SELECT 1 FROM acp_migrations WHERE id = $1", [bad.id])).rowCount).toBe(0);
    await check.close();
    await expect(openPostgresStore(db.url, { migrations: [{ id: "Bad Id", up: "" }] })).rejects.toMatchObject({
      code: "postgres_migration_failed",
    });
  });

  it("refuses a database a newer version migrated (postgres_schema_newer), not one another program's migrations extend", async () => {
    const db = await freshDatabase();
    const first = await openPostgresStore(db.url);
    // another program's feature beside ours: its business
    await first.query("INSERT INTO acp_migrations (id) VALUES ('other-tool/001-tables')");
    await openPostgresStore(db.url).then((s) => s.close());
    // a newer acp added a rule to a feature this version keeps: this one would ignore it
    await first.query("INSERT INTO acp_migrations (id) VALUES ('nonce/900-newer-rule')");
    const before = await listPostgresMigrations(first);
    await expect(openPostgresStore(db.url)).rejects.toMatchObject({
      code: "postgres_schema_newer",
      message: expect.stringContaining("(migration `nonce/900-newer-rule` is not known to this one)") as unknown,
    });
    // also when this version has a migration of its own still to apply: nothing is applied
    await expect(
      openPostgresStore(db.url, { migrations: [{ id: "test/001-mine", up: "CREATE TABLE mine (x int)" }] }),
    ).rejects.toMatchObject({ code: "postgres_schema_newer" });
    expect(await listPostgresMigrations(first)).toEqual(before);
    expect((await first.query("SELECT to_regclass('mine') AS t")).rows[0]).toEqual({ t: null });
    // a reader that migrates nothing (`acp audit verify`, `acp pending`) still opens
    await openPostgresStore(db.url, { migrate: false }).then((s) => s.close());
    await first.close();
  });

  it("refuses a URL that is not postgres, and never shows a password", async () => {
    await expect(openPostgresStore("mysql://root@127.0.0.1/acp")).rejects.toMatchObject({
      code: "postgres_url_invalid",
    });
    await expect(openPostgresStore("not a url")).rejects.toMatchObject({ code: "postgres_url_invalid" });
    expect(redactPostgresUrl("postgres://acp:s3cret@db.internal:5432/acp")).toBe(
      "postgres://acp:***@db.internal:5432/acp",
    );
    const port = await closedPort();
    const failure = await openPostgresStore(`postgres://acp:s3cret@127.0.0.1:${port}/acp`, {
      connectTimeoutMs: 2000,
    }).then(
      () => null,
      (err: unknown) => err as { code: string; message: string },
    );
    expect(failure?.code).toBe("postgres_unavailable");
    expect(failure?.message).toContain(`postgres://acp:***@127.0.0.1:${port}/acp: cannot connect`);
    expect(failure?.message).not.toContain("s3cret");
  });

  it("cancels a statement that runs past the statement timeout instead of hanging", async () => {
    const db = await freshDatabase();
    // migrated first: on a loaded machine a migration can take longer than 200 ms itself
    await openPostgresStore(db.url).then((s) => s.close());
    const impatient = await openPostgresStore(db.url, { statementTimeoutMs: 200 });
    await expect(impatient.query("SELECT pg_sleep(5)")).rejects.toThrow(/statement timeout/);
    expect((await impatient.query("SELECT 1 AS one")).rows[0]).toEqual({ one: 1 });
    await impatient.close();
  });

  it("rejects every use of a closed store with postgres_store_closed", async () => {
    const db = await freshDatabase();
    const closing = await openPostgresStore(db.url);
    await closing.close();
    await closing.close();
    expect(closing.closed).toBe(true);
    await expect(createPostgresNonceStore(closing).spend("n", "cr", T0)).rejects.toMatchObject({
      code: "postgres_store_closed",
    });
    await expect(closing.transaction(() => Promise.resolve(1))).rejects.toMatchObject({
      code: "postgres_store_closed",
    });
    await expect(closing.connectDedicated()).rejects.toMatchObject({ code: "postgres_store_closed" });
  });
});

describe("bad input to the postgres store", () => {
  it("refuses text postgres cannot store with a clear error and stores nothing", async () => {
    const store = await sharedStore();
    const nonces = createPostgresNonceStore(store);
    await expect(nonces.spend("n_\u0000x", "cr", T0)).rejects.toMatchObject({ code: "postgres_input_invalid" });
    await expect(nonces.spend("", "cr", T0)).rejects.toMatchObject({ code: "postgres_input_invalid" });
    await expect(nonces.spend("n_ok", "cr", Number.NaN)).rejects.toMatchObject({ code: "postgres_input_invalid" });
    expect(await nonces.isSpent("n_\u0000x")).toBe(false);
    expect((await store.query("SELECT count(*)::int AS n FROM spent_nonces")).rows[0]).toEqual({ n: 0 });

    const limiter = createPostgresRateLimiter(store);
    await expect(limiter.consume("k\u0000", 1, 1000, T0)).rejects.toMatchObject({ code: "postgres_input_invalid" });
    await expect(limiter.consume("k", 1, 1000, Number.POSITIVE_INFINITY)).rejects.toMatchObject({
      code: "postgres_input_invalid",
    });

    const pending = createPostgresPendingConsentStore(store);
    await expect(pending.insert(pendingRow("cr_\u0000"))).rejects.toMatchObject({ code: "postgres_input_invalid" });
    await expect(pending.insert(pendingRow("cr_t", { createdAtMs: 1.5 }))).rejects.toMatchObject({
      code: "postgres_input_invalid",
    });
    await expect(pending.insert(pendingRow("cr_u", { request: undefined }))).rejects.toMatchObject({
      code: "postgres_input_invalid",
    });
    await expect(pending.insert(pendingRow(`cr_${"é".repeat(MAX_CONSENT_ID_LENGTH)}`))).rejects.toMatchObject({
      code: "postgres_input_invalid",
    });
    const longest = `cr_${"é".repeat(MAX_CONSENT_ID_LENGTH - 3)}`;
    await pending.insert(pendingRow(longest));
    expect(await pending.decide(longest, "approved", {}, T0)).toMatchObject({ ok: true });
    expect((await store.query("DELETE FROM pending_consent WHERE id = $1", [longest])).rowCount).toBe(1);
    expect(await pending.get("cr_\u0000")).toBeNull();
    expect(await pending.decide("cr_\u0000", "approved", {}, T0)).toEqual({
      ok: false,
      code: "consent_request_unknown",
    });
    expect(await pending.listPending(T0)).toEqual([]);
  });

  it("tells a duplicate consent id apart from other failures", async () => {
    const store = await sharedStore();
    const pending = createPostgresPendingConsentStore(store);
    await pending.insert(pendingRow("cr_dup"));
    await expect(pending.insert(pendingRow("cr_dup"))).rejects.toMatchObject({ code: "postgres_consent_duplicate" });
  });

  it("lists a flood of pending requests in one query, and none once they have expired", async () => {
    const store = await sharedStore();
    const pending = createPostgresPendingConsentStore(store);
    const values = Array.from(
      { length: 2000 },
      (_, i) => `('cr_f${i}', 'n_f${i}', 's', 't', '{}', '[]', ${T0}, ${T0 + 60_000})`,
    );
    await store.query(
      `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms)
       VALUES ${values.join(",")}`,
    );
    const listed = await pending.listPending(T0);
    expect(listed.filter((r) => r.id.startsWith("cr_f"))).toHaveLength(2000);
    expect(await pending.listPending(T0 + 60_000)).toEqual([]);
  });
});
