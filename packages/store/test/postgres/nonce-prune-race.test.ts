/**
 * Every node prunes spent nonces (each spend, and `acp serve`'s sweep every minute), so sweepers meet. Two
 * nodes' prunes are held behind a table lock until both wait on it, then released together: each old nonce
 * is deleted by exactly one of them, neither waits for the other's rows or fails, and the nonces still
 * needed — fresh, or carried by a consent row — stay.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresNonceStore,
  openPostgresStore,
  SPENT_NONCE_KEEP_MS,
  type PostgresStore,
} from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const open: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

const T0 = Date.parse("2026-04-01T12:00:00Z");
const LATER = T0 + 60_000 + SPENT_NONCE_KEEP_MS + 1;
const OLD = 300;

/**
 * Resolves once `n` prunes wait for a lock (a barrier: no clock involved). `probe` is outside any transaction
 * (in one, `pg_stat_activity` would answer the same snapshot each time).
 */
async function untilWaiting(probe: pg.Client, n: number): Promise<void> {
  for (;;) {
    const r = await probe.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%DELETE FROM spent_nonces%'`,
    );
    if ((r.rows[0]?.n ?? 0) >= n) return;
  }
}

describe("two nodes pruning spent nonces at once", () => {
  it("delete each old nonce once between them, and keep the fresh and the held ones", async () => {
    const [a, b] = await Promise.all([openPostgresStore(db.url), openPostgresStore(db.url)]);
    open.push(a, b);
    const seed = createPostgresNonceStore(a, { now: () => T0 });
    for (let i = 0; i < OLD; i++) expect(await seed.spend(`n_old_${i}`, `cr_old_${i}`, T0 + 60_000)).toBe(true);
    expect(await seed.spend("n_fresh", "cr_fresh", LATER)).toBe(true);
    expect(await seed.spend("n_held", "cr_held", T0 + 60_000)).toBe(true);
    await a.query(
      `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms, status)
       VALUES ('cr_held', 'n_held', 'mail', 'send_email', '{}', '[]', 0, 0, 'approved')`,
    );

    const holder = new pg.Client({ connectionString: db.url });
    const probe = new pg.Client({ connectionString: db.url });
    await Promise.all([holder.connect(), probe.connect()]);
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE spent_nonces IN EXCLUSIVE MODE"); // a DELETE waits for it
      const pruning = [a, b].map((store) => createPostgresNonceStore(store).prune(LATER));
      await untilWaiting(probe, 2);
      await holder.query("COMMIT"); // both go at once
      const counts = await Promise.all(pruning);
      expect(counts.reduce((sum, n) => sum + n, 0)).toBe(OLD);
    } finally {
      await Promise.all([holder.end(), probe.end()]);
    }

    const left = await a.query<{ nonce: string }>("SELECT nonce FROM spent_nonces ORDER BY nonce");
    expect(left.rows.map((r) => r.nonce)).toEqual(["n_fresh", "n_held"]);
    expect(await createPostgresNonceStore(b).prune(LATER)).toBe(0); // idempotent
  });
});
