/**
 * The network between a node and its database stops carrying packets, with no reset (a partition, a
 * firewall dropping them): the database cannot cancel what it never hears of, so before, a query waited
 * for the kernel to give up on the socket (a quarter of an hour) — every decision hung instead of refusing —
 * and a transaction cut off mid-way held its locks (the audit chain's) for hours. Now a query with no
 * answer rejects `postgres_unavailable` (and says so to `onConnectionError`), and the server ends a session
 * left idle in a transaction, so the other nodes get the lock.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore, PostgresStoreError, type PostgresStore } from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const opened: PostgresStore[] = [];
const proxies: Server[] = [];

afterAll(async () => {
  for (const s of opened) await s.close().catch(() => undefined);
  for (const p of proxies) p.close();
});

/** A loopback hop to the database whose `cut()` stops forwarding bytes both ways, closing nothing. */
/** The database's tables, made at the default timeouts (the tests' short ones are for what follows). */
async function migrated(url: string): Promise<void> {
  await openPostgresStore(url).then((s) => s.close());
}

async function cuttableHop(target: string): Promise<{ url: string; cut(): void; heal(): void }> {
  const to = new URL(target);
  let cut = false;
  const sockets: Socket[] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(to.port), to.hostname);
    sockets.push(client, upstream);
    client.on("data", (d: Buffer) => void (cut || upstream.write(d)));
    upstream.on("data", (d: Buffer) => void (cut || client.write(d)));
    for (const s of [client, upstream]) s.on("error", () => undefined);
    // once cut, not even a close gets through
    client.on("close", () => void (cut || upstream.destroy()));
    upstream.on("close", () => void (cut || client.destroy()));
  });
  proxies.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    cut: () => {
      cut = true;
    },
    heal: () => {
      cut = false;
    },
  };
}

describe("a database cut off by the network", () => {
  it("rejects a query that gets no answer instead of hanging, tells the owner, and answers once healed", async () => {
    await migrated(db.url);
    const hop = await cuttableHop(db.url);
    const lost: Error[] = [];
    const store = await openPostgresStore(hop.url, {
      connectTimeoutMs: 1000,
      statementTimeoutMs: 500,
      queryTimeoutMs: 1000,
      onConnectionError: (err) => lost.push(err),
    });
    opened.push(store);
    expect((await store.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);

    hop.cut();
    const failed = await store.query("SELECT 2 AS two").then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(PostgresStoreError);
    expect(failed).toMatchObject({
      code: "postgres_unavailable",
      message: expect.stringMatching(
        /: the database did not answer within 1000 ms \(cut off by the network\?\)$/,
      ) as unknown,
    });
    expect(lost.map((e) => (e as { code?: string }).code)).toContain("postgres_unavailable");
    // a new connection cannot be made either: it fails at the connect timeout
    await expect(store.transaction((c) => c.query("SELECT 3"))).rejects.toThrow(/Connection terminated/);

    hop.heal();
    // the connections that waited were dropped: new ones answer
    expect((await store.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("does not leave the locks of a transaction cut off mid-way to the other nodes' cost", async () => {
    await migrated(db.url);
    const hop = await cuttableHop(db.url);
    const cutNode = await openPostgresStore(hop.url, {
      statementTimeoutMs: 500,
      queryTimeoutMs: 1000,
      onConnectionError: () => undefined,
    });
    opened.push(cutNode);
    const other = await openPostgresStore(db.url, { statementTimeoutMs: 20_000 });
    opened.push(other);

    const cutOff = cutNode.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(4242, 1)");
      hop.cut();
      await client.query("SELECT 1"); // never answered
    });
    await expect(cutOff).rejects.toMatchObject({ code: "postgres_unavailable" });
    // the other node takes the lock (before: it waited for its statement timeout and failed)
    const took = await other.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(4242, 1)");
      return true;
    });
    expect(took).toBe(true);
  });
});
