/**
 * `acp serve` on PostgreSQL stopped while its database cannot be reached (a failover, the database stopped
 * first in a shutdown): its close cannot write the chain's final checkpoint. It ended with `acp: internal
 * error: <the driver's words>`; now it says it stopped, that closing the state failed and what that leaves
 * (the events after the last checkpoint unsigned), exit 1.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { postgresTestUrl, useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { freshHome, startServe } from "../serve-fixture.js";

const db = useTestDatabase();

function dbName(): string {
  return new URL(db.url).pathname.slice(1);
}

/** Lets the database take connections, or ends every connection to it and refuses new ones. */
async function setConnections(allowed: boolean): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresTestUrl() });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE ${dbName()} WITH ALLOW_CONNECTIONS ${allowed ? "true" : "false"}`);
    if (!allowed) {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [dbName()]);
    }
  } finally {
    await admin.end();
  }
}

afterAll(async () => {
  await setConnections(true).catch(() => undefined);
});

describe("acp serve on PostgreSQL stopped while the database is gone", () => {
  it("says it stopped without closing its state and what that leaves, exit 1, not an internal error", async () => {
    const serve = startServe(freshHome(), ["--storage-url", db.url, "--port", "0"]);
    const { url } = await serve.ready;
    const decided = await fetch(`${url}/v1/decide`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ server: "fs", tool: "read_file", arguments: { path: "/tmp/x" } }),
    });
    expect(decided.status).toBe(200);
    await setConnections(false);
    serve.stop();
    const failed = (await serve.done.then(
      () => null,
      (e: unknown) => e,
    )) as { message: string; exitCode?: number } | null;
    expect(failed?.exitCode).toBe(1);
    expect(failed?.message).toMatch(/^stopped, but closing its state failed \(--storage-url: postgres:\/\//);
    expect(failed?.message).toContain("the audit chain's final checkpoint may be missing");
    expect(failed?.message).toContain("`acp audit verify` says how many");
  });
});
