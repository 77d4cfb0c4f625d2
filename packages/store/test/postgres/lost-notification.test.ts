/**
 * A decision whose notification never reaches the waiting node, with no disconnect to say so: its `LISTEN`
 * connection was cut by the network without a reset (TCP keep-alive notices hours later), or a pooler in
 * transaction mode did not pass `LISTEN` on. Before, only a notification or a reconnect re-read the row,
 * so the call waited until its request expired and was refused although a person had approved it in
 * time. Now the waiter also looks at the rows it waits for every few seconds.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresPendingConsentStore,
  openConsentWaiter,
  openPostgresStore,
  type ConsentWaiter,
  type PostgresStore,
} from "../../src/index.js";
import { pendingRow } from "../cases/pending-store.case.js";
import { useTestDatabase } from "./test-database.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");
const db = useTestDatabase();
const stores: PostgresStore[] = [];
const waiters: ConsentWaiter[] = [];
afterAll(async () => {
  for (const w of waiters) await w.close();
  for (const s of stores) await s.close();
});

describe("a decision whose notification is lost", () => {
  it("still reaches the waiting call", async () => {
    const a = await openPostgresStore(db.url, { applicationName: "node-a-lost" });
    const b = await openPostgresStore(db.url, { applicationName: "node-b-lost" });
    stores.push(a, b);
    await createPostgresPendingConsentStore(a).insert(pendingRow("cr_lost", { expiresAtMs: T0 + 3_600_000 }));
    const waiter = await openConsentWaiter(a, { pollMs: 50 });
    waiters.push(waiter);
    const abort = new AbortController();
    const waited = waiter.wait("cr_lost", { signal: abort.signal });
    // the answer is written, but its notification never arrives (the statement B's store would send it with)
    await b.query(
      "UPDATE pending_consent SET status = 'approved', answer_json = $2, decided_at_ms = $3 WHERE id = $1",
      ["cr_lost", JSON.stringify({ by: "alice" }), T0 + 1000],
    );
    // bound the wait, so the old code fails here instead of hanging the run
    const bound = setTimeout(() => abort.abort(new Error("the decision never reached the waiting call")), 10_000);
    try {
      const row = await waited;
      expect(row).toMatchObject({ id: "cr_lost", status: "approved", answer: { by: "alice" } });
    } finally {
      clearTimeout(bound);
    }
    expect(waiter.size).toBe(0);
  });
});
