import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { ClaimServer } from "@acp/claim";
import { createTestDatabase, type TestDatabase } from "../../../store/test/postgres/test-database.js";
import { serveClaim } from "../../src/commands/claim.js";
import type { CliContext } from "../../src/context.js";
import { runCli, silentContext } from "../run.js";

let server: ClaimServer | undefined;
let db: TestDatabase | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await db?.drop();
  db = undefined;
});

function context(home: string, env: Record<string, string> = {}): CliContext {
  return silentContext({ ACP_HOME: home, HOME: home, ...env }, home);
}

async function sandboxStates(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ state: string }>("SELECT state FROM claim_sandboxes")).rows.map((r) => r.state);
  } finally {
    await c.end();
  }
}

describe("acp claim serve on PostgreSQL", () => {
  it("--storage-url postgres://… keeps the provider's state in that database (an agent publishes through it)", async () => {
    db = await createTestDatabase();
    const home = mkdtempSync(join(tmpdir(), "acp-claim-pg-"));
    const started = await serveClaim(context(home), { port: "0", difficulty: "8", storageUrl: db.url });
    server = started.server;
    writeFileSync(
      join(home, "faq.json"),
      JSON.stringify({ title: "PG FAQ", questions: [{ question: "q?", answer: "a" }] }),
    );
    const provider = `http://api.localhost:${started.port}`;
    const pub = await runCli(["claim", "publish", "--provider", provider, "--file", join(home, "faq.json"), "--json"], {
      env: { ACP_HOME: home, HOME: home },
    });
    expect(pub.code).toBe(0);
    expect(await sandboxStates(db.url)).toEqual(["published"]);
  });

  it("ACP_STORAGE_URL selects PostgreSQL too; --db with a storage URL is a usage error", async () => {
    db = await createTestDatabase();
    const home = mkdtempSync(join(tmpdir(), "acp-claim-pg-"));
    await expect(
      serveClaim(context(home, { ACP_STORAGE_URL: db.url }), { port: "0", db: join(home, "x.db") }),
    ).rejects.toThrow("--db and ACP_STORAGE_URL both given: pick SQLite or PostgreSQL");
    const started = await serveClaim(context(home, { ACP_STORAGE_URL: db.url }), { port: "0", difficulty: "8" });
    server = started.server;
    expect(await sandboxStates(db.url)).toEqual([]);
  });

  it("a storage URL that is not postgres fails with the reason, the password never shown", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-claim-pg-"));
    const err = await serveClaim(context(home), { port: "0", storageUrl: "mysql://u:s3cret@localhost/x" }).then(
      () => "started",
      (e: Error) => e.message,
    );
    expect(err).toContain("--storage-url: storage url scheme `mysql` is not postgres");
    expect(err).not.toContain("s3cret");
  });
});
