/**
 * `acp doctor` with a PostgreSQL storage URL checks what an `acp serve` node there holds to: this machine's
 * clock against the database's (a node more than 2 s off refuses decisions, `postgres_clock_skew`) and the
 * node's audit anchor in the home (`audit-postgres-<id>.checkpoint`), which the database must still hold
 * byte for byte. Before, doctor said only that the database answered.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openServerStores } from "@acp/server";
import { anchorPathFor, createTestDatabase, useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { testKeys } from "../../../server/test/harness.js";
import { run } from "../../src/main.js";
import type { CliIo } from "../../src/context.js";
import { envFor, fixtureHome, tempRoot } from "../home-fixture.js";

const db = useTestDatabase();
const root = tempRoot("doctor-clock-anchor");
afterAll(root.cleanup);

interface Check {
  readonly status: string;
  readonly name: string;
  readonly detail: string;
}

/** `acp doctor --json` in-process on a clock that runs (`offsetMs` from this machine's). */
async function doctor(
  env: Record<string, string>,
  offsetMs = 0,
): Promise<{ code: number; healthy: boolean; checks: Check[] }> {
  let stdout = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: () => true },
    readStdin: () => Promise.resolve(""),
    stdinIsTTY: false,
    env,
    cwd: process.cwd(),
    now: () => new Date(Date.now() + offsetMs),
  };
  const code = await run(["doctor", "--json"], io);
  const parsed = JSON.parse(stdout) as { healthy: boolean; checks: Check[] };
  return { code, ...parsed };
}

const find = (checks: readonly Check[], name: string): Check | undefined => checks.find((c) => c.name === name);

/** Writes a few events and a final signed checkpoint into the database as a node whose home is `home`. */
async function runNode(url: string, home: string): Promise<void> {
  const stores = await openServerStores({
    storageUrl: url,
    statePath: join(home, "state.db"),
    auditPath: join(home, "audit.jsonl"), // the node's anchor goes beside it, in its home
    clock: () => new Date(),
    keys: testKeys(),
  });
  for (const tool of ["read_a", "send_b"]) {
    await stores.auditLog.append({ event_type: "policy_evaluated", tool, decision: "accept" });
  }
  await stores.close(); // the final checkpoint
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const LAST_CHECKPOINT = "(SELECT max(seq) FROM acp_audit_events WHERE event_type = 'checkpoint')";

describe("acp doctor: the clock against the database's", () => {
  it("passes with the measured offset when the clocks agree", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await doctor({ ...envFor(home), ACP_STORAGE_URL: db.url });
    expect(r.code).toBe(0);
    const clock = find(r.checks, "clock");
    expect(clock?.status).toBe("ok");
    expect(clock?.detail).toMatch(/^[+-]\d+ ms ±\d+ ms from the database's clock \(at most 2000 ms allowed\)$/);
    // before the machine's own check, which stays last
    expect(r.checks.map((c) => c.name).slice(-4)).toEqual(["storage", "clock", "audit anchor", "isolation"]);
  });

  it("fails beyond 2 s, either way, naming the fix (NTP)", async () => {
    const { home } = fixtureHome(root.dir);
    for (const [offset, way] of [
      [60_000, "ahead of"],
      [-5_000, "behind"],
    ] as const) {
      const r = await doctor({ ...envFor(home), ACP_STORAGE_URL: db.url }, offset);
      expect(r.code).toBe(1);
      expect(r.healthy).toBe(false);
      const clock = find(r.checks, "clock");
      expect(clock?.status).toBe("fail");
      expect(clock?.detail).toContain(`this machine's clock is ${Math.abs(offset) / 1000}.0s ${way} the database's`);
      expect(clock?.detail).toMatch(/postgres_clock_skew.*NTP/);
    }
  });

  it("is not run when no storage URL is set (SQLite)", async () => {
    const { home } = fixtureHome(root.dir);
    const r = await doctor(envFor(home), 60_000);
    expect(find(r.checks, "clock")).toBeUndefined();
    expect(find(r.checks, "audit anchor")).toBeUndefined();
  });
});

describe("acp doctor: the node's audit anchor for the database", () => {
  it("with none in this home: fine before the chain's first checkpoint, a warning naming the rows and newest checkpoint after; writes none", async () => {
    const own = await createTestDatabase();
    try {
      const { home } = fixtureHome(root.dir);
      const env = { ...envFor(home), ACP_STORAGE_URL: own.url };
      const empty = find((await doctor(env)).checks, "audit anchor");
      expect(empty?.status).toBe("ok");
      expect(empty?.detail).toMatch(
        /^no node anchor for this database yet \(audit-postgres-[0-9a-f]{16}\.checkpoint\) and the audit chain is empty/,
      );

      // rows before the chain's first checkpoint: no node keeps an anchor yet (a running node's home neither)
      await sql(
        own.url,
        "CREATE TABLE acp_audit_events (seq bigint PRIMARY KEY, event_type text NOT NULL, line text NOT NULL)",
      );
      await sql(own.url, "INSERT INTO acp_audit_events VALUES (1, 'policy_evaluated', '{}')");
      const unsigned = find((await doctor(env)).checks, "audit anchor");
      expect(unsigned?.status).toBe("ok");
      expect(unsigned?.detail).toContain("and the audit chain holds 1 row and no checkpoint yet");
      await sql(own.url, "DROP TABLE acp_audit_events");

      await runNode(own.url, fixtureHome(root.dir).home); // another home's node: 2 events and its checkpoint
      const r = await doctor(env);
      const anchor = find(r.checks, "audit anchor");
      expect(anchor?.status).toBe("warn");
      expect(anchor?.detail).toMatch(
        /^this home holds no node anchor for this database \(audit-postgres-[0-9a-f]{16}\.checkpoint\) while the audit chain holds 3 rows \(its newest checkpoint at row 3\)/,
      );
      // since 09b292c a first start verifies the whole chain; it no longer trusts the newest checkpoint
      expect(anchor?.detail).toContain("first start here verifies the whole chain from row 1");
      expect(anchor?.detail).toContain("its anchor was lost");
      expect(anchor?.detail).not.toContain("trusts");
      expect(existsSync(await anchorPathFor(home, own.url))).toBe(false);
    } finally {
      await own.drop();
    }
  });

  it("passes while the database holds the node's checkpoint row byte for byte, fails once it is changed or gone", async () => {
    const own = await createTestDatabase();
    try {
      const { home } = fixtureHome(root.dir);
      await runNode(own.url, home);
      const anchorPath = await anchorPathFor(home, own.url);
      const held = readFileSync(anchorPath, "utf8");
      const env = { ...envFor(home), ACP_STORAGE_URL: own.url };

      const ok = await doctor(env);
      expect(ok.checks.filter((c) => c.status === "fail")).toEqual([]);
      expect(ok.code).toBe(0);
      expect(find(ok.checks, "audit anchor")).toEqual({
        status: "ok",
        name: "audit anchor",
        detail: expect.stringMatching(
          /^the database still holds this node's signed checkpoint, row \d+, byte for byte \(audit-postgres-/,
        ) as string,
      });

      // one byte more in the row: a rewritten checkpoint
      await sql(own.url, `UPDATE acp_audit_events SET line = line || ' ' WHERE seq = ${LAST_CHECKPOINT}`);
      const changed = await doctor(env);
      expect(changed.code).toBe(1);
      const c = find(changed.checks, "audit anchor");
      expect(c?.status).toBe("fail");
      expect(c?.detail).toMatch(/^row \d+ of the database is not this node's signed checkpoint .* byte for byte/);
      expect(c?.detail).toContain("acp audit verify");

      await sql(own.url, `DELETE FROM acp_audit_events WHERE seq = ${LAST_CHECKPOINT}`);
      const gone = await doctor(env);
      expect(gone.code).toBe(1);
      const g = find(gone.checks, "audit anchor");
      expect(g?.status).toBe("fail");
      expect(g?.detail).toMatch(/^the database no longer has row \d+, this node's signed checkpoint/);
      expect(g?.detail).toContain("acp audit verify");
      expect(readFileSync(anchorPath, "utf8")).toBe(held); // doctor moved nothing
    } finally {
      await own.drop();
    }
  });
});
