/**
 * A starting `acp proxy` concludes the answered requests of a proxy that died before reading the answer
 * (`answeredOrphans`, then a spend of each nonce). It used to read every answered row of a dead owner still
 * in the table (a day of them) at every start and spend each in its own transaction — a commit, and a sync
 * to disk, per row, for rows earlier starts had concluded long ago. Now only rows whose nonce is unspent are
 * read, and they are spent in one transaction: counted here by the statements SQLite ran, not by time.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createPendingConsentStore, createSqliteNonceStore, type NewPendingConsent } from "../../src/index.js";

const T0 = Date.parse("2026-03-02T10:00:00Z");
const row = (id: string): NewPendingConsent => ({
  id,
  nonce: `n_${id}`,
  sessionId: "s1",
  server: "fs",
  tool: "write_file",
  request: { id },
  reasons: [],
  createdAtMs: T0,
  expiresAtMs: T0 + 120_000,
});

let db: Database.Database | undefined;
afterEach(() => db?.close());

/** A database that writes down every statement it runs, with a dead owner's answered rows. */
function answeredByADeadOwner(ids: readonly string[]): { statements: string[]; db: Database.Database } {
  const statements: string[] = [];
  db = new Database(":memory:", { verbose: (sql) => statements.push(String(sql)) });
  // a process that has exited (and been reaped): its pid no longer exists
  const gone = { pid: spawnSync(process.execPath, ["-e", ""]).pid ?? 0, host: hostname(), start: null };
  const dead = createPendingConsentStore(db, { owner: gone });
  for (const id of ids) {
    dead.insert(row(id));
    expect(dead.decide(id, "approved", { decision: "approved", nonce: `n_${id}` }, T0 + 1_000).ok).toBe(true);
  }
  return { statements, db };
}

/** The stores a starting proxy opens (creating them runs their migrations once: not counted below). */
function storesOf(database: Database.Database) {
  return {
    pending: createPendingConsentStore(database),
    nonces: createSqliteNonceStore(database, { now: () => T0 + 2_000 }),
  };
}

/** What a starting proxy does with them (`settleOrphanedConsent`): the rows whose spend succeeded. */
function concludeUnread({ pending, nonces }: ReturnType<typeof storesOf>): string[] {
  const answered = pending.answeredOrphans();
  const spent = nonces.spendEach(
    answered.map((r) => ({ nonce: r.nonce, requestId: r.id, expiresAtMs: r.expiresAtMs })),
  );
  return answered.filter((_, i) => spent[i] === true).map((r) => r.id);
}

const commits = (statements: readonly string[]): number => statements.filter((s) => /^COMMIT\b/i.test(s)).length;
const spends = (statements: readonly string[]): number =>
  statements.filter((s) => /^INSERT OR IGNORE INTO spent_nonces\b/i.test(s)).length;

describe("answeredOrphans and the spends of a starting proxy", () => {
  it("spends the unread answers in one transaction, and a later start neither reads nor spends them again", () => {
    const ids = ["cr_1", "cr_2", "cr_3", "cr_4", "cr_5"];
    const { statements, db: database } = answeredByADeadOwner(ids);
    const first = storesOf(database);

    statements.length = 0;
    expect(concludeUnread(first)).toEqual(ids);
    expect(spends(statements)).toBe(ids.length);
    expect(commits(statements)).toBe(1);

    // the next start: the rows are still in the table (kept a day), their nonces spent
    const next = storesOf(database);
    statements.length = 0;
    expect(next.pending.answeredOrphans()).toEqual([]);
    expect(concludeUnread(next)).toEqual([]);
    expect(spends(statements)).toBe(0);
    expect(commits(statements)).toBe(0);
    expect(database.prepare("SELECT count(*) AS n FROM pending_consent").get()).toEqual({ n: ids.length });
  });

  it("still reads a row whose nonce is unspent, next to rows already concluded", () => {
    const { db: database } = answeredByADeadOwner(["cr_used", "cr_unread"]);
    // the proxy read and checked this answer before it died
    expect(createSqliteNonceStore(database).spend("n_cr_used", "cr_used", T0 + 120_000)).toBe(true);
    expect(
      createPendingConsentStore(database)
        .answeredOrphans()
        .map((r) => r.id),
    ).toEqual(["cr_unread"]);
    expect(concludeUnread(storesOf(database))).toEqual(["cr_unread"]);
  });

  it("reads every answered row of a dead owner in a database where no nonce store was ever made", () => {
    const { db: database } = answeredByADeadOwner(["cr_a", "cr_b"]);
    expect(database.prepare("SELECT name FROM sqlite_master WHERE name = 'spent_nonces'").get()).toBeUndefined();
    expect(
      createPendingConsentStore(database)
        .answeredOrphans()
        .map((r) => r.id),
    ).toEqual(["cr_a", "cr_b"]);
  });

  it("spendEach: one result per nonce, in order, false for a nonce spent before or twice in the list", () => {
    db = new Database(":memory:");
    const nonces = createSqliteNonceStore(db, { now: () => T0 });
    expect(nonces.spend("n_a", "cr_a", T0 + 60_000)).toBe(true);
    const each = (nonce: string) => ({ nonce, requestId: `cr_${nonce}`, expiresAtMs: T0 + 60_000 });
    expect(nonces.spendEach([each("n_a"), each("n_b"), each("n_b"), each("n_c")])).toEqual([false, true, false, true]);
    expect(nonces.spendEach([])).toEqual([]);
    expect(() => nonces.spendEach([each("n_d"), each("")])).toThrow(TypeError);
    // a list refused as a whole spends nothing
    expect(nonces.isSpent("n_d")).toBe(false);
  });
});
