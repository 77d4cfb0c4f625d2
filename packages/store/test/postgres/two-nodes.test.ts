/**
 * Two nodes (two separate pools, as two `acp serve` processes would have) on one real PostgreSQL:
 * consent, nonces and rate limits are shared, and a node that dies mid-wait loses nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresRateLimiter,
  openConsentWaiter,
  openPostgresStore,
  watchConsentDecisions,
  type PendingConsentRow,
  type PostgresStore,
} from "../../src/index.js";
import { pendingRow } from "../cases/pending-store.case.js";
import { useTestDatabase } from "./test-database.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");
const db = useTestDatabase();
const open: PostgresStore[] = [];

async function node(name: string): Promise<PostgresStore> {
  const store = await openPostgresStore(db.url, { applicationName: name, max: 5 });
  open.push(store);
  return store;
}

/** Cuts every connection of a node from the server side, as a crash or a network cut would. */
async function cutConnections(via: PostgresStore, applicationName: string): Promise<number> {
  const cut = await via.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()",
    [applicationName],
  );
  return cut.rowCount ?? 0;
}

afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

describe("two nodes on one PostgreSQL", () => {
  it("a request raised through node A is approved through node B and completes on A", async () => {
    const a = await node("node-a-consent");
    const b = await node("node-b-consent");
    const seen: PendingConsentRow[] = [];
    const watch = await watchConsentDecisions(a, (row) => seen.push(row));
    const waiter = await openConsentWaiter(a);
    await createPostgresPendingConsentStore(a).insert(
      pendingRow("cr_ab", { createdAtMs: Date.now(), expiresAtMs: Date.now() + 60_000 }),
    );
    const waiting = waiter.wait("cr_ab");
    expect((await createPostgresPendingConsentStore(b).listPending(Date.now())).map((r) => r.id)).toEqual(["cr_ab"]);
    const decided = await createPostgresPendingConsentStore(b).decide("cr_ab", "approved", { by: "bob" }, Date.now());
    expect(decided.ok).toBe(true);
    const row = await waiting;
    expect(row).toMatchObject({ id: "cr_ab", status: "approved", answer: { by: "bob" } });
    await expect.poll(() => seen.map((r) => `${r.id}:${r.status}`)).toEqual(["cr_ab:approved"]);
    expect(waiter.size).toBe(0);
    await Promise.all([watch.close(), waiter.close()]);
  });

  it("a denial through B reaches A, and A's own late answer is refused", async () => {
    const a = await node("node-a-deny");
    const b = await node("node-b-deny");
    const waiter = await openConsentWaiter(a);
    const pendingA = createPostgresPendingConsentStore(a);
    await pendingA.insert(pendingRow("cr_deny", { createdAtMs: T0, expiresAtMs: Number.MAX_SAFE_INTEGER }));
    const waiting = waiter.wait("cr_deny");
    await createPostgresPendingConsentStore(b).decide("cr_deny", "denied", { reason: "no" }, T0 + 1);
    expect(await waiting).toMatchObject({ status: "denied", answer: { reason: "no" } });
    expect(await pendingA.decide("cr_deny", "approved", {}, T0 + 2)).toEqual({
      ok: false,
      code: "consent_request_already_decided",
      status: "denied",
    });
    await waiter.close();
  });

  it("a nonce spent on A is refused on B, and of racing spends from both exactly one wins", async () => {
    const a = createPostgresNonceStore(await node("node-a-nonce"));
    const b = createPostgresNonceStore(await node("node-b-nonce"));
    expect(await a.spend("n_shared", "cr_1", T0 + 60_000)).toBe(true);
    expect(await b.spend("n_shared", "cr_1", T0 + 60_000)).toBe(false);
    expect(await b.isSpent("n_shared")).toBe(true);
    const racing = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).spend("n_race", "cr_2", T0 + 60_000));
    expect((await Promise.all(racing)).filter(Boolean)).toHaveLength(1);
  });

  it("shares one rate limit: concurrent consumes from both nodes never exceed it", async () => {
    const a = createPostgresRateLimiter(await node("node-a-rate"));
    const b = createPostgresRateLimiter(await node("node-b-rate"));
    const calls = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).consume("send_email", 7, 60_000, T0 + i));
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(7);
    expect((await a.consume("send_email", 7, 60_000, T0 + 100)).allowed).toBe(false);
    expect((await b.consume("send_email", 7, 60_000, T0 + 60_000 + 40)).allowed).toBe(true);
  });

  it("a node killed mid-wait loses nothing: its request is decided meanwhile and completes after it restarts", async () => {
    const b = await node("node-b-restart");
    const a1 = await openPostgresStore(db.url, { applicationName: "node-a-killed" });
    const waiter1 = await openConsentWaiter(a1);
    await createPostgresPendingConsentStore(a1).insert(
      pendingRow("cr_crash", { createdAtMs: T0, expiresAtMs: Number.MAX_SAFE_INTEGER }),
    );
    const lost = waiter1.wait("cr_crash").then(
      () => "resolved",
      () => "rejected",
    );
    expect(await cutConnections(b, "node-a-killed")).toBeGreaterThan(0);
    await waiter1.close();
    await a1.close();
    expect(await lost).toBe("rejected");
    const pendingB = createPostgresPendingConsentStore(b);
    expect((await pendingB.get("cr_crash"))?.status).toBe("pending");
    expect(await pendingB.decide("cr_crash", "approved", { by: "b" }, T0 + 5)).toMatchObject({ ok: true });

    const a2 = await node("node-a-restarted");
    const waiter2 = await openConsentWaiter(a2);
    expect(await waiter2.wait("cr_crash")).toMatchObject({ status: "approved", answer: { by: "b" } });
    const nonce = (await pendingB.get("cr_crash"))?.nonce ?? "";
    expect(await createPostgresNonceStore(a2).spend(nonce, "cr_crash", T0 + 60_000)).toBe(true);
    expect(await createPostgresNonceStore(b).spend(nonce, "cr_crash", T0 + 60_000)).toBe(false);
    await waiter2.close();
  });

  it("a waiting node whose connections are cut reconnects and still sees a decision made while it was cut", async () => {
    const a = await node("node-a-cut");
    const b = await node("node-b-cut");
    const errors: Error[] = [];
    const waiter = await openConsentWaiter(a, { onError: (err) => errors.push(err) });
    await createPostgresPendingConsentStore(a).insert(
      pendingRow("cr_cut", { createdAtMs: T0, expiresAtMs: Number.MAX_SAFE_INTEGER }),
    );
    const waiting = waiter.wait("cr_cut");
    await expect.poll(() => waiter.size).toBe(1);
    expect(await cutConnections(b, "node-a-cut")).toBeGreaterThan(0);
    expect(await createPostgresPendingConsentStore(b).decide("cr_cut", "approved", {}, T0 + 1)).toMatchObject({
      ok: true,
    });
    expect(await waiting).toMatchObject({ id: "cr_cut", status: "approved" });
    expect(errors.length).toBeGreaterThan(0);
    await waiter.close();
  });

  it("rejects a wait for an unknown request, and every open wait when the waiter closes", async () => {
    const a = await node("node-a-unknown");
    const waiter = await openConsentWaiter(a);
    await expect(waiter.wait("cr_nope")).rejects.toMatchObject({ code: "postgres_consent_unknown" });
    await createPostgresPendingConsentStore(a).insert(
      pendingRow("cr_open", { createdAtMs: T0, expiresAtMs: Number.MAX_SAFE_INTEGER }),
    );
    const aborted = new AbortController();
    const first = waiter.wait("cr_open", { signal: aborted.signal });
    const second = waiter.wait("cr_open");
    await expect.poll(() => waiter.size).toBe(1);
    aborted.abort(new Error("caller gave up"));
    await expect(first).rejects.toThrow("caller gave up");
    await waiter.close();
    await expect(second).rejects.toMatchObject({ code: "postgres_store_closed" });
    expect(waiter.size).toBe(0);
  });
});
