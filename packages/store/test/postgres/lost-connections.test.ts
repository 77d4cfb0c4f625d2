/**
 * A database connection lost while the store holds it (a PostgreSQL restart, a failover, an administrator
 * ending sessions) fails what was running on it, never the process: before, a connection checked out for
 * a transaction had no `error` listener, and the `error` event of its end was thrown as an uncaught
 * exception (an `acp serve` node died when PostgreSQL restarted). The store stays usable afterwards.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/index.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

const dbs: TestDatabase[] = [];
const stores: PostgresStore[] = [];

afterAll(async () => {
  for (const s of stores) await s.close();
  for (const db of dbs) await db.drop();
});

async function open(): Promise<{ store: PostgresStore; url: string }> {
  const db = await createTestDatabase();
  dbs.push(db);
  const store = await openPostgresStore(db.url, { applicationName: "lost-connections" });
  stores.push(store);
  return { store, url: db.url };
}

/** Ends a backend from another connection, as an administrator (or a restarting server) does. */
async function terminate(url: string, pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
  } finally {
    await admin.end();
  }
}

/** Resolves once the client's connection has ended (its socket closed). */
function ended(client: pg.PoolClient): Promise<void> {
  return new Promise((resolve) => {
    const connection = (client as unknown as { connection: { once(e: string, f: () => void): void } }).connection;
    connection.once("end", () => resolve());
  });
}

describe("a connection lost under the postgres store", () => {
  it("a transaction whose connection is ended between two statements rejects; the process and the store live on", async () => {
    const { store, url } = await open();
    const outcome = store.transaction(async (client) => {
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
      const gone = ended(client);
      await terminate(url, pid); // no statement of ours runs on it meanwhile
      await gone;
      await client.query("SELECT 1");
      return "committed";
    });
    await expect(outcome).rejects.toThrow();
    expect((await store.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
  });

  it("a transaction whose statement ends its own connection rejects; the store answers afterwards", async () => {
    const { store } = await open();
    await expect(
      store.transaction((client) => client.query("SELECT pg_terminate_backend(pg_backend_pid())")),
    ).rejects.toThrow();
    expect((await store.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one).toBe(1);
  });

  it("a dedicated connection ended before its owner listens for errors does not throw", async () => {
    const { store, url } = await open();
    const client = await store.connectDedicated();
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;
    const gone = new Promise<void>((resolve) => client.once("end", () => resolve()));
    await terminate(url, pid);
    await gone;
    await expect(client.query("SELECT 1")).rejects.toThrow();
    await client.end().catch(() => undefined);
  });
});
