/**
 * The console's live list on a node whose `LISTEN` connection was lost (PostgreSQL restarted, an
 * administrator ended it): the feed listens again on its own and reports the other nodes' changes. Before,
 * it reconnected only at this node's next own write, so the list went stale until the slow poll.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresPendingConsentStore, openPostgresStore, type PostgresStore } from "@acp/store";
import { openNotifiedChangeFeed, type ConsentChange } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { eventually } from "../harness.js";

const db = useTestDatabase();
const stores: PostgresStore[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
});

async function listeners(url: string): Promise<number[]> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const rows = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    return rows.rows.map((r) => r.pid);
  } finally {
    await admin.end();
  }
}

async function terminate(url: string, pids: number[]): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (const pid of pids) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
  } finally {
    await admin.end();
  }
}

describe("the PostgreSQL consent change feed", () => {
  it("listens again by itself after its connection is ended, and reports another node's new request", async () => {
    const node = await openPostgresStore(db.url, { applicationName: "feed-node" });
    const other = await openPostgresStore(db.url, { applicationName: "other-node" });
    stores.push(node, other);
    const errors: Error[] = [];
    // the fallback poll never runs in this test: only a notification can report the change
    const feed = await openNotifiedChangeFeed(node, {
      clock: () => new Date(),
      intervalMs: 3_600_000,
      onError: (e) => errors.push(e),
    });
    const seen: ConsentChange[] = [];
    const unsubscribe = feed.subscribe((c) => seen.push(c));
    const before = await eventually(async () => {
      const pids = await listeners(db.url);
      return pids.length === 1 ? pids : false;
    });
    await terminate(db.url, before);
    await eventually(() => errors.length > 0);
    // listening again on a new connection
    await eventually(async () => {
      const pids = await listeners(db.url);
      return pids.length === 1 && pids[0] !== before[0];
    });
    const now = Date.now();
    const id = "cr_0123456789abcdef0123456789abcdef";
    await createPostgresPendingConsentStore(other).insert({
      id,
      nonce: "n_feed",
      server: "fs",
      tool: "write_file",
      request: { id },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 60_000,
    });
    await other.query("SELECT pg_notify('acp_consent', '')"); // what a node's poke sends
    await eventually(() => seen.some((c) => c.kind === "pending" && c.id === id));
    expect(seen).toContainEqual({ kind: "pending", id, status: "pending" });
    unsubscribe();
    feed.close();
  });
});
