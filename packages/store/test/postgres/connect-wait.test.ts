/**
 * `waitForPostgres`: a node started with its database retries while nothing listens yet (growing pauses,
 * each told, up to the wait given), and fails at once, not retried, when a running server refuses (a role
 * or database that does not exist). The pauses run on a test clock: nothing here waits for real.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { isPostgresStarting, waitForPostgres, type PostgresConnectRetry } from "@acp/store";
import { postgresTestUrl, useTestDatabase } from "./test-database.js";

const db = useTestDatabase();

/** A loopback port nothing listens on (taken and released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A clock that moves only when the wait pauses. */
function testClock() {
  let t = 0;
  return { now: () => t, sleep: (ms: number) => ((t += ms), Promise.resolve()) };
}

describe("waiting for PostgreSQL at start", () => {
  it("retries while nothing listens, with growing pauses each told, and gives up when the wait is over", async () => {
    const url = `postgres://acp:secret-pw@127.0.0.1:${await closedPort()}/acp`;
    const told: PostgresConnectRetry[] = [];
    const waiting = waitForPostgres(url, { waitMs: 20_000, ...testClock(), onRetry: (r) => told.push(r) });
    await expect(waiting).rejects.toMatchObject({ code: "postgres_unavailable" });
    await expect(waiting).rejects.toThrow(/ECONNREFUSED.*not accepting connections after 8 attempts in 20 s/);
    await expect(waiting).rejects.not.toThrow(/secret-pw/);
    expect(told.map((r) => r.delayMs)).toEqual([500, 1000, 2000, 4000, 5000, 5000, 2500]);
    expect(told.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(told.every((r) => r.reason.includes("ECONNREFUSED") && r.waitMs === 20_000)).toBe(true);
  });

  it("with a wait of 0 tries once", async () => {
    const told: PostgresConnectRetry[] = [];
    const url = `postgres://acp@127.0.0.1:${await closedPort()}/acp`;
    const once = waitForPostgres(url, { waitMs: 0, ...testClock(), onRetry: (r) => told.push(r) });
    await expect(once).rejects.toThrow(/cannot connect: .*ECONNREFUSED/);
    expect(told).toEqual([]);
  });

  it("resolves at once on a database that answers", async () => {
    const told: PostgresConnectRetry[] = [];
    await waitForPostgres(db.url, { waitMs: 20_000, ...testClock(), onRetry: (r) => told.push(r) });
    expect(told).toEqual([]);
  });

  it("fails at once, not retried, when the running server refuses the database or the role", async () => {
    const told: PostgresConnectRetry[] = [];
    const noDb = new URL(db.url);
    noDb.pathname = "/acp_no_such_database";
    const missing = waitForPostgres(noDb.toString(), { waitMs: 600_000, ...testClock(), onRetry: (r) => told.push(r) });
    await expect(missing).rejects.toMatchObject({ code: "postgres_unavailable" });
    await expect(missing).rejects.toThrow(
      /database "acp_no_such_database" does not exist \(not retried: the database does not exist/,
    );
    const noRole = new URL(postgresTestUrl());
    noRole.username = "acp_no_such_role";
    const refused = waitForPostgres(noRole.toString(), {
      waitMs: 600_000,
      ...testClock(),
      onRetry: (r) => told.push(r),
    });
    await expect(refused).rejects.toThrow(/role "acp_no_such_role" does not exist \(not retried: the user or password/);
    expect(told).toEqual([]);
  });

  it("tells starting from refused: nothing listening or starting up is retried, an answer of a running server is not", () => {
    const coded = (code: string, message = "x") => Object.assign(new Error(message), { code });
    expect(isPostgresStarting(coded("ECONNREFUSED"))).toBe(true);
    expect(isPostgresStarting(coded("ENOTFOUND"))).toBe(true);
    expect(isPostgresStarting(coded("57P03", "the database system is starting up"))).toBe(true);
    expect(isPostgresStarting(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isPostgresStarting(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")]))).toBe(true);
    expect(isPostgresStarting(new AggregateError([coded("ECONNREFUSED"), coded("28P01")]))).toBe(false);
    expect(isPostgresStarting(coded("28P01", "password authentication failed"))).toBe(false);
    expect(isPostgresStarting(coded("3D000"))).toBe(false);
    expect(isPostgresStarting(coded("53300", "too many connections"))).toBe(false);
    expect(isPostgresStarting(new Error("The server does not support SSL connections"))).toBe(false);
  });
});
