import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLAIM_MIGRATIONS } from "@acp/claim";
import { listAppliedMigrations, openStateDb, type StateDbMigration } from "@acp/store";
import { runCli } from "./run.js";

const NOW = new Date("2026-01-15T12:00:00Z");
const LAST = CLAIM_MIGRATIONS.at(-1)?.id ?? "";
const BEFORE_LAST = CLAIM_MIGRATIONS.at(-2)?.id ?? "";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A provider's `state.db` with `migrations` applied (what a provider of that version made), in a fresh ACP home. */
function providerHome(migrations: readonly StateDbMigration[]): { env: Record<string, string>; db: string } {
  const home = mkdtempSync(join(tmpdir(), "acp-claim-read-"));
  dirs.push(home);
  const db = join(home, "state.db");
  openStateDb(db, { migrations }).close();
  return { env: { HOME: home, ACP_HOME: home }, db };
}

/** The state.db with one score of 40 for `key` (default 203.0.113.0/24), stored at `NOW`. */
function providerWithScore(key = "range:203.0.113.0/24"): { env: Record<string, string>; db: string } {
  const p = providerHome(CLAIM_MIGRATIONS);
  const db = openStateDb(p.db);
  db.prepare("INSERT INTO claim_reputation (key, score, updated_at) VALUES (?, ?, ?)").run(key, 40, NOW.getTime());
  db.close();
  return p;
}

const sha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");

function appliedIds(path: string): string[] {
  const db = openStateDb(path, { readonly: true });
  try {
    return listAppliedMigrations(db);
  } finally {
    db.close();
  }
}

describe("acp claim reputation reads the provider's SQLite state without writing to it", () => {
  it("reads a current provider database: the score is shown, state.db is byte for byte the same", async () => {
    const { env, db } = providerWithScore();
    const before = sha256(db);
    expect(readdirSync(join(db, "..")).sort()).toEqual(["state.db"]);
    const out = await runCli(["claim", "reputation", "203.0.113.7", "--json"], { env, now: NOW });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ sources: [{ key: "range:203.0.113.0/24", score: 40 }] });
    expect(sha256(db)).toBe(before);
    // opened read-only, SQLite (3.51) still makes the -wal and -shm a WAL reader needs, and leaves them on close
    // (only a writer checkpoints and removes them); no page is written: the -wal stays empty
    expect(readdirSync(join(db, "..")).sort()).toEqual(["state.db", "state.db-shm", "state.db-wal"]);
    expect(statSync(`${db}-wal`).size).toBe(0);
  });

  it("an IPv6 address or /48, however it is written, names the key the provider charges (its first three groups)", async () => {
    const p = providerWithScore("range:2001:db8:0::/48");
    const sources = ["2001:db8::7", "2001:db8:0:1::9", "2001:db8::/48", "2001:0DB8:0000::/48"];
    const out = await runCli(["claim", "reputation", ...sources, "--json"], { env: p.env, now: NOW });
    expect(out.stderr).toBe("");
    const rows = (JSON.parse(out.stdout) as { sources: { key: string; score: number }[] }).sources;
    expect(rows.map((r) => [r.key, r.score])).toEqual(sources.map(() => ["range:2001:db8:0::/48", 40]));
  });

  it("range: takes the same forms as a bare range, and a range or subject the provider never keys is a usage error, not a clean score 0", async () => {
    const p = providerWithScore("range:2001:db8:0::/48");
    const same = ["range:2001:db8::/48", "range:2001:db8::7", "range:2001:0db8:0000::/48"];
    const out = await runCli(["claim", "reputation", ...same, "--json"], { env: p.env, now: NOW });
    expect([out.code, out.stderr]).toEqual([0, ""]);
    const rows = (JSON.parse(out.stdout) as { sources: { key: string; score: number }[] }).sources;
    expect(rows.map((r) => [r.key, r.score])).toEqual(same.map(() => ["range:2001:db8:0::/48", 40]));
    for (const never of [
      "203.0.113.0/16",
      "2001:db8::/64",
      "range:10.0.0.0/8",
      "range:nonsense",
      "subject:x",
      "subject:kid:",
    ]) {
      for (const reset of [[], ["--reset"]]) {
        const r = await runCli(["claim", "reputation", never, ...reset], { env: p.env, now: NOW });
        expect([never, reset, r.code, r.stdout]).toEqual([never, reset, 2, ""]);
        expect(r.stderr).toContain("/24 or /48");
      }
    }
    const kept = await runCli(["claim", "reputation", "2001:db8::1", "--json"], { env: p.env, now: NOW });
    expect(JSON.parse(kept.stdout)).toMatchObject({ sources: [{ score: 40 }] });
  });

  it("reads while the provider holds its write lock: a read takes none", async () => {
    const { env, db } = providerWithScore();
    const provider = openStateDb(db);
    try {
      provider.exec("BEGIN IMMEDIATE");
      provider.prepare("UPDATE claim_reputation SET score = 90").run();
      const started = Date.now();
      const out = await runCli(["claim", "reputation", "203.0.113.0/24"], { env, now: NOW });
      expect(out.stderr).toBe("");
      expect(out.code).toBe(0);
      // the committed score, not the provider's uncommitted one; and at once, not after a busy wait
      expect(out.stdout).toBe("range:203.0.113.0/24: score 40, +3 bits\n");
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      provider.exec("ROLLBACK");
      provider.close();
    }
  });

  it("refuses (exit 1) a database whose claim schema is older, naming both versions, and leaves it unchanged; --reset migrates it", async () => {
    const { env, db } = providerHome(CLAIM_MIGRATIONS.slice(0, -1));
    const before = sha256(db);
    const out = await runCli(["claim", "reputation", "203.0.113.7"], { env, now: NOW });
    expect(out.stdout).toBe("");
    expect(out.stderr).toBe(
      `acp: \`${db}\`: claim schema is at \`${BEFORE_LAST}\` and this acp expects \`${LAST}\`: read it with the acp of the provider's version, or run \`acp claim serve\` of this version once to migrate it (a read never migrates)\n`,
    );
    expect(out.code).toBe(1);
    expect(sha256(db)).toBe(before);
    expect(appliedIds(db)).toEqual(CLAIM_MIGRATIONS.slice(0, -1).map((m) => m.id));
    // a command that writes migrates first, as acp claim serve does; then the read works
    const reset = await runCli(["claim", "reputation", "203.0.113.7", "--reset"], { env, now: NOW });
    expect(reset.code).toBe(0);
    expect(appliedIds(db)).toEqual(CLAIM_MIGRATIONS.map((m) => m.id));
    expect((await runCli(["claim", "reputation", "203.0.113.7"], { env, now: NOW })).code).toBe(0);
  });

  it("refuses (exit 1) a database a newer provider migrated, naming its version, and leaves it unchanged", async () => {
    const { env, db } = providerHome(CLAIM_MIGRATIONS);
    const newer = openStateDb(db);
    newer.prepare("INSERT INTO acp_migrations (id) VALUES (?)").run("claim/999-from-a-newer-acp");
    newer.close();
    const before = sha256(db);
    const out = await runCli(["claim", "reputation", "203.0.113.7"], { env, now: NOW });
    expect(out.stderr).toBe(
      `acp: \`${db}\`: claim schema is at \`claim/999-from-a-newer-acp\`, newer than this acp knows (\`${LAST}\`): read it with the acp of the provider's version (a read never migrates)\n`,
    );
    expect(out.code).toBe(1);
    expect(sha256(db)).toBe(before);
  });

  it("refuses (exit 1) a state.db without claim tables instead of adding them", async () => {
    const { env, db } = providerHome([]);
    const before = sha256(db);
    const out = await runCli(["claim", "reputation", "203.0.113.7"], { env, now: NOW });
    expect(out.stderr).toBe(
      `acp: \`${db}\`: no claim schema (no \`claim/…\` migration recorded): not a claim provider's state, or \`acp claim serve\` never ran on it\n`,
    );
    expect(out.code).toBe(1);
    expect(sha256(db)).toBe(before);
    expect(appliedIds(db)).toEqual([]);
  });
});
