/**
 * A limited insert whose turn does not come in time writes nothing and answers `busy`: the wait for the
 * limit's advisory lock is bounded (`lock_timeout`), and so is the wait for a pooled connection. Before,
 * it waited on the lock while holding a connection until the statement timeout (30 s) and then threw the
 * server's cancellation, which the service answered as an internal error.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import {
  ADVISORY_LOCK,
  createPostgresPendingConsentStore,
  openPostgresStore,
  type PostgresStore,
} from "../../src/index.js";
import { pendingRow } from "../cases/pending-store.case.js";
import { useTestDatabase } from "./test-database.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");
const db = useTestDatabase();
const opened: PostgresStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

async function open(options: Parameters<typeof openPostgresStore>[1] = {}): Promise<PostgresStore> {
  const store = await openPostgresStore(db.url, options);
  opened.push(store);
  return store;
}

/** Holds the pending limit's lock on a connection of its own (as another node's insert would) until released. */
async function holdLimitLock(): Promise<{ release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query("SELECT pg_advisory_lock($1, 0)", [ADVISORY_LOCK.pendingConsent]);
  return {
    async release() {
      await holder.query("SELECT pg_advisory_unlock($1, 0)", [ADVISORY_LOCK.pendingConsent]);
      await holder.end();
    },
  };
}

describe("a limited insert that cannot take its turn in time", () => {
  it("answers busy and writes nothing when the limit's lock is not free within the lock timeout", async () => {
    const store = await open();
    const pending = createPostgresPendingConsentStore(store, { lockTimeoutMs: 100 });
    const lock = await holdLimitLock();
    try {
      expect(await pending.insertWithinLimit(pendingRow("cr_locked"), { max: 10 })).toEqual({
        ok: false,
        full: "busy",
      });
    } finally {
      await lock.release();
    }
    expect(await pending.get("cr_locked")).toBeNull();
    // the connection went back to the pool with nothing left over: the next insert takes its turn
    expect(await pending.insertWithinLimit(pendingRow("cr_after"), { max: 10 })).toEqual({ ok: true });
    expect((await pending.listPending(T0)).map((r) => r.id)).toEqual(["cr_after"]);
  });

  it("answers busy too when the statement timeout ends the wait first", async () => {
    const store = await open({ statementTimeoutMs: 100 });
    const pending = createPostgresPendingConsentStore(store, { lockTimeoutMs: 60_000 });
    const lock = await holdLimitLock();
    try {
      expect(await pending.insertWithinLimit(pendingRow("cr_stmt"), { max: 10 })).toEqual({
        ok: false,
        full: "busy",
      });
    } finally {
      await lock.release();
    }
    expect(await pending.get("cr_stmt")).toBeNull();
  });

  it("answers busy when no pooled connection comes free within the pool's timeout", async () => {
    const store = await open({ max: 1, connectTimeoutMs: 100 });
    const pending = createPostgresPendingConsentStore(store);
    let free = (): void => undefined;
    const held = store.transaction(() => new Promise<void>((resolve) => (free = resolve)));
    try {
      expect(await pending.insertWithinLimit(pendingRow("cr_pool"), { max: 10 })).toEqual({
        ok: false,
        full: "busy",
      });
    } finally {
      free();
      await held;
    }
    expect(await pending.get("cr_pool")).toBeNull();
  });

  it("still rejects what is not a wait: a duplicate id", async () => {
    const store = await open();
    const pending = createPostgresPendingConsentStore(store, { lockTimeoutMs: 100 });
    await pending.insert(pendingRow("cr_dup"));
    await expect(pending.insertWithinLimit(pendingRow("cr_dup"), { max: 10 })).rejects.toMatchObject({
      code: "postgres_consent_duplicate",
    });
  });
});
