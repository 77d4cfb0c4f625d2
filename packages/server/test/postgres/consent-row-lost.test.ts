/**
 * The database connection is cut while a node writes a consent request's row (PostgreSQL restarting, a
 * failover, an administrator ending the session): the call must be refused, never allowed — it was, but
 * as 500 `internal_error`, the store's error reaching the HTTP layer unmapped, so a caller could not tell
 * an outage from a bug in the service. Now it is 503 `audit_unavailable` like every other decision the
 * state store cannot record, nothing is asked or allowed, and once the database answers the node's
 * calls go through again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { eventually, openTestServerAt, readJson } from "../harness.js";

const db = useTestDatabase();
const dirs: string[] = [];
const running: EmbeddedServer[] = [];
afterAll(async () => {
  for (const node of running) await node.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function decide(url: string, path: string, wait: boolean): Promise<Response> {
  return fetch(`${url}/v1/decide${wait ? "?wait=true" : ""}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool: wait ? "write_file" : "read_file", arguments: { path } }),
  });
}

describe("a connection cut while a consent request's row is written", () => {
  it("refuses the call 503 audit_unavailable (not 500), asks nobody, and the node recovers", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-row-lost-"));
    dirs.push(home);
    const { node, url } = await openTestServerAt(home, { storageUrl: db.url, onStoreError: () => undefined });
    running.push(node);
    // the session writing a row ends itself, mid-transaction: exactly the moment under test, every time
    await admin(
      `CREATE FUNCTION cut_session() RETURNS trigger LANGUAGE plpgsql AS
         $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
       CREATE TRIGGER cut_session BEFORE INSERT ON pending_consent FOR EACH ROW EXECUTE FUNCTION cut_session();`,
    );
    const refused = await decide(url, "/tmp/a.txt", true);
    expect(refused.status).toBe(503);
    expect(await readJson(refused)).toMatchObject({ error: { code: "audit_unavailable" } });
    expect(await node.stores.pending.listPending(Date.now())).toEqual([]);

    await admin("DROP TRIGGER cut_session ON pending_consent");
    const read = await eventually(async () => {
      const res = await decide(url, "/tmp/b.txt", false);
      return res.status === 200 ? res : false;
    });
    expect(await readJson(read)).toMatchObject({ route: "accept" });
  });
});
