import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStoreError } from "@acp/store";
import { mapError } from "../src/http/error-handler.js";
import { at, readJson, startTestServer, tokenFor, type TestServer } from "./harness.js";

// A store that is busy or away (state.db locked by another process past its busy timeout, a lost
// PostgreSQL connection) answered 500 internal_error, as a bug would. It is 503 state_unavailable with
// Retry-After: the request may be retried, and nothing was recorded.
let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("state store busy or away", () => {
  it("an answer while state.db is locked by another process is 503 state_unavailable; retried later, it counts", async () => {
    const TOKEN = "test-token-0123456789";
    const server = (s = await startTestServer({ token: TOKEN }));
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const waiting = post("/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/x" } });
    let id: string | undefined;
    while (id === undefined) {
      id = (await server.stores.pending.listPending(Date.now()))[0]?.id;
      await new Promise((r) => setTimeout(r, 20));
    }
    const other = new Database(join(server.home, "state.db"));
    other.exec("BEGIN IMMEDIATE");
    let locked: Response;
    try {
      locked = await post(`/v1/consent/${id}/response`, { decision: "approved", scope: "once" });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(locked.status).toBe(503);
    expect(locked.headers.get("retry-after")).toBe("1");
    expect(at(await readJson(locked), "error", "code")).toBe("state_unavailable");
    // nothing was recorded: the request is still pending and takes the answer now
    expect((await server.stores.pending.listPending(Date.now())).map((r) => r.id)).toEqual([id]);
    expect((await post(`/v1/consent/${id}/response`, { decision: "approved", scope: "once" })).status).toBe(200);
    expect(await readJson(await waiting)).toMatchObject({ route: "accept" });
  }, 30_000);

  it("maps store errors that say busy or away to 503, and leaves every other error a 500", () => {
    const sqlite = (code: string): Error =>
      Object.assign(new Error("database is locked"), { name: "SqliteError", code });
    const pg = (code: string): Error => Object.assign(new Error("pg"), { code, severity: "FATAL" });
    for (const error of [
      sqlite("SQLITE_BUSY"),
      sqlite("SQLITE_BUSY_SNAPSHOT"),
      sqlite("SQLITE_IOERR_FSYNC"),
      new PostgresStoreError("postgres_unavailable", "down"),
      pg("57P01"),
      pg("08006"),
      pg("40001"),
      new Error("Connection terminated unexpectedly"),
      new Error("timeout exceeded when trying to connect"),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
    ])
      expect(mapError(error), String(error)).toMatchObject({ status: 503, code: "state_unavailable" });
    for (const error of [
      sqlite("SQLITE_CONSTRAINT_UNIQUE"),
      sqlite("SQLITE_MISMATCH"),
      pg("23505"),
      pg("42P01"),
      new PostgresStoreError("postgres_input_invalid", "bad"),
      new TypeError("x is undefined"),
    ])
      expect(mapError(error), String(error)).toMatchObject({ status: 500, code: "internal_error" });
  });
});
