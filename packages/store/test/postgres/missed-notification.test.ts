/**
 * A decision's notification reaches a waiting node whose `LISTEN` connection is fine, but the read of the
 * row it names fails — the node's pool has no connection free in time (a burst of decisions), or a
 * statement times out. The waiter only reported that error: the decision was missed for good (a reconnect
 * is what re-reads rows, and the `LISTEN` connection never dropped), so the call waited until it expired
 * and was refused although a person had approved it in time. Now a failed read of a row someone waits for
 * is retried (with the waiter's backoff) until it answers.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresPendingConsentStore,
  openConsentWaiter,
  openPostgresStore,
  type PostgresStore,
} from "../../src/index.js";
import { pendingRow } from "../cases/pending-store.case.js";
import { useTestDatabase } from "./test-database.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");
const db = useTestDatabase();
const open: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

describe("a notification whose row cannot be read at once", () => {
  it("is not missed: the waiter reads the row again until it answers", async () => {
    // node A: one pooled connection that gives up waiting for it after 200 ms
    const a = await openPostgresStore(db.url, { applicationName: "node-a-missed", max: 1, connectTimeoutMs: 200 });
    const b = await openPostgresStore(db.url, { applicationName: "node-b-missed" });
    open.push(a, b);
    let failedRead!: () => void;
    const readFailed = new Promise<void>((resolve) => (failedRead = resolve));
    const waiter = await openConsentWaiter(a, {
      retryMs: 20,
      onError: (err) => {
        if (/timeout/.test(err.message)) failedRead();
      },
    });
    await createPostgresPendingConsentStore(b).insert(
      pendingRow("cr_missed", { createdAtMs: T0, expiresAtMs: Number.MAX_SAFE_INTEGER }),
    );
    const waiting = waiter.wait("cr_missed"); // its first read takes A's connection now
    // queued behind that read (the pool serves in order), a transaction then holds A's only connection
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const hold = a.transaction(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
          held();
        }),
    );
    await holding;
    expect(waiter.size).toBe(1); // the first read saw it pending

    // B decides: A hears of it on its LISTEN connection, but cannot read the row (no pooled connection)
    expect(
      await createPostgresPendingConsentStore(b).decide("cr_missed", "approved", { by: "b" }, T0 + 1),
    ).toMatchObject({ ok: true });
    await readFailed;
    release();
    await hold;
    expect(await waiting).toMatchObject({ id: "cr_missed", status: "approved", answer: { by: "b" } });
    await waiter.close();
  });
});
