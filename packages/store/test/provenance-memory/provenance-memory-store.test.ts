import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
import {
  applyMigrations,
  createProvenanceMemoryStore,
  FORGOTTEN_SOURCE,
  openStateDb,
  type StateDbMigration,
} from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "acp-provenance-memory-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const HOUR = 3_600_000;
const KEY = new Uint8Array(32).fill(7);
const IBAN = "iban:DE89370400440532013000";

/** The memory's first two migrations as they shipped: digests salted with a salt kept in the file. */
const SALTED_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "provenance-memory/001-table",
    up: `CREATE TABLE provenance_memory (
           identity_hash TEXT    PRIMARY KEY,
           source        TEXT    NOT NULL,
           seen_at_ms    INTEGER NOT NULL
         ) STRICT;
         CREATE INDEX provenance_memory_seen ON provenance_memory (seen_at_ms);
         CREATE TABLE provenance_memory_salt (
           one  INTEGER PRIMARY KEY CHECK (one = 1),
           salt BLOB    NOT NULL
         ) STRICT;
         INSERT INTO provenance_memory_salt (one, salt) VALUES (1, randomblob(32));`,
  },
  {
    id: "provenance-memory/002-forgotten",
    up: `CREATE TABLE provenance_memory_forgotten (
           one        INTEGER PRIMARY KEY CHECK (one = 1),
           seen_at_ms INTEGER NOT NULL
         ) STRICT;`,
  },
];

function clock(start = Date.parse("2026-11-27T10:00:00Z")) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => void (t += ms) };
}

describe("the provenance memory in state.db", () => {
  it("recalls what was remembered, from another connection to the same file with the same key", () => {
    const path = join(dir, `state-${++n}.db`);
    const c = clock();
    const writer = createProvenanceMemoryStore(openStateDb(path), { now: c.now, key: KEY, rememberMs: 24 * HOUR });
    writer.remember([IBAN, "email:billing@attacker.example"], "mail.read_inbox#3");
    const reader = createProvenanceMemoryStore(openStateDb(path), { now: c.now, key: KEY, rememberMs: 24 * HOUR });
    expect(reader.recall(IBAN)).toBe("mail.read_inbox#3");
    expect(reader.recall("email:billing@attacker.example")).toBe("mail.read_inbox#3");
    expect(reader.recall("email:someone@else.example")).toBeUndefined();
  });

  it("keeps HMAC digests under a key it is given, never the identifiers or the key, and no salt", () => {
    const path = join(dir, `state-${++n}.db`);
    const db = openStateDb(path);
    const store = createProvenanceMemoryStore(db, { now: clock().now, key: KEY, rememberMs: HOUR });
    store.remember([IBAN, "email:billing@attacker.example"], "mail.read_inbox#1");
    db.pragma("wal_checkpoint(TRUNCATE)");
    const bytes = readFileSync(path);
    expect(bytes.toString("latin1")).toContain("mail.read_inbox#1");
    expect(bytes.toString("latin1")).not.toContain("DE89370400440532013000");
    expect(bytes.toString("latin1")).not.toContain("attacker.example");
    expect(bytes.includes(Buffer.from(KEY))).toBe(false);
    // the digest is the key's: the file alone gives nothing to test a guess with
    const digests = db
      .prepare("SELECT identity_hash FROM provenance_memory ORDER BY identity_hash")
      .all()
      .map((r) => (r as { identity_hash: string }).identity_hash);
    const hmac = (id: string) => createHmac("sha256", Buffer.from(KEY)).update(id, "utf8").digest("hex");
    expect(digests).toEqual([hmac(IBAN), hmac("email:billing@attacker.example")].sort());
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'provenance_memory_salt'").get()).toBeUndefined();
  });

  it("counts what a file's salted rows held as forgotten when it upgrades, until their window ends", () => {
    const path = join(dir, `state-${++n}.db`);
    const c = clock();
    const old = openStateDb(path);
    applyMigrations(old, SALTED_MIGRATIONS);
    old
      .prepare("INSERT INTO provenance_memory (identity_hash, source, seen_at_ms) VALUES (?, ?, ?)")
      .run("ab".repeat(32), "mail.read_inbox#1", c.now().getTime());
    old.close();
    c.advance(HOUR / 2);
    const db = openStateDb(path);
    const store = createProvenanceMemoryStore(db, { now: c.now, key: KEY, rememberMs: HOUR });
    expect(db.prepare("SELECT count(*) AS n FROM provenance_memory").get()).toEqual({ n: 0 });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'provenance_memory_salt'").get()).toBeUndefined();
    // not vouched for as never read while the dropped row would still have been remembered
    expect(store.recall(IBAN)).toBe(FORGOTTEN_SOURCE);
    c.advance(HOUR / 2);
    expect(store.recall(IBAN)).toBeUndefined();
  });

  it("counts rows made under another key as forgotten, and a store whose key was replaced refuses", () => {
    const path = join(dir, `state-${++n}.db`);
    const c = clock();
    const first = createProvenanceMemoryStore(openStateDb(path), { now: c.now, key: KEY, rememberMs: HOUR });
    first.remember([IBAN], "mail.read_inbox#1");
    const other = new Uint8Array(32).fill(9);
    const second = createProvenanceMemoryStore(openStateDb(path), { now: c.now, key: other, rememberMs: HOUR });
    expect(second.recall(IBAN)).toBe(FORGOTTEN_SOURCE);
    second.remember(["email:x@y.example"], "web.fetch#1");
    expect(second.recall("email:x@y.example")).toBe("web.fetch#1");
    expect(() => first.recall(IBAN)).toThrow("key changed");
    expect(() => first.remember([IBAN], "mail.read_inbox#2")).toThrow("key changed");
    c.advance(HOUR);
    expect(second.recall(IBAN)).toBeUndefined();
  });

  it("refuses a key shorter than 32 bytes", () => {
    expect(() =>
      createProvenanceMemoryStore(openStateDb(":memory:"), {
        now: clock().now,
        key: new Uint8Array(16),
        rememberMs: HOUR,
      }),
    ).toThrow("32 bytes");
  });

  it("forgets an identity a window after it was last seen; seeing it again moves it to now", () => {
    const c = clock();
    const store = createProvenanceMemoryStore(openStateDb(":memory:"), { now: c.now, key: KEY, rememberMs: 24 * HOUR });
    store.remember([IBAN], "mail.read_inbox#1");
    c.advance(20 * HOUR);
    store.remember([IBAN], "mail.read_inbox#7");
    c.advance(20 * HOUR);
    expect(store.recall(IBAN)).toBe("mail.read_inbox#7");
    c.advance(4 * HOUR);
    expect(store.recall(IBAN)).toBeUndefined();
    expect(store.prune()).toBe(1);
    expect(store.prune()).toBe(0);
  });

  it("keeps at most its limit, the least recently seen going first", () => {
    const c = clock();
    const db = openStateDb(":memory:");
    const store = createProvenanceMemoryStore(db, { now: c.now, key: KEY, rememberMs: HOUR, maxIdentities: 3 });
    for (const id of ["email:a@x.example", "email:b@x.example", "email:c@x.example", "email:d@x.example"]) {
      store.remember([id], id);
      c.advance(1);
    }
    store.prune();
    expect(db.prepare("SELECT count(*) AS n FROM provenance_memory").get()).toEqual({ n: 3 });
    expect(store.recall("email:a@x.example")).toBe(FORGOTTEN_SOURCE);
    expect(store.recall("email:d@x.example")).toBe("email:d@x.example");
  });

  it("does not let a flood of addresses wash out an identity still within its window", () => {
    const path = join(dir, `state-${++n}.db`);
    const c = clock();
    const store = createProvenanceMemoryStore(openStateDb(path), {
      now: c.now,
      key: KEY,
      rememberMs: HOUR,
      maxIdentities: 100,
    });
    store.remember([IBAN], "mail.read_inbox#1");
    c.advance(1);
    // the attacker's next page: more addresses than the memory keeps, each result within the per-text limit
    for (let page = 0; page < 3; page++) {
      store.remember(
        Array.from({ length: 50 }, (_, i) => `email:x${page}-${i}@flood.example`),
        `web.fetch#${page + 2}`,
      );
      c.advance(1); // each page later than the one before: which rows the overflow keeps is not left to the hashes
    }
    store.prune();
    // pushed out, but not vouched for as never read: neither here nor from another proxy of the home
    expect(store.recall(IBAN)).toBe(FORGOTTEN_SOURCE);
    const other = createProvenanceMemoryStore(openStateDb(path), {
      now: c.now,
      key: KEY,
      rememberMs: HOUR,
      maxIdentities: 100,
    });
    expect(other.recall(IBAN)).toBe(FORGOTTEN_SOURCE);
    expect(other.recall("email:x2-49@flood.example")).toBe("web.fetch#4");
    // once what was dropped would have expired anyway, an identity the memory does not know is unknown again
    c.advance(HOUR);
    expect(store.recall(IBAN)).toBeUndefined();
    expect(store.recall("email:someone@else.example")).toBeUndefined();
  });

  it("prunes after many identities, not only after many calls (the table stays near its limit)", () => {
    const c = clock();
    const db = openStateDb(":memory:");
    const store = createProvenanceMemoryStore(db, { now: c.now, key: KEY, rememberMs: HOUR, maxIdentities: 100 });
    for (let call = 0; call < 20; call++) {
      store.remember(
        Array.from({ length: 9 }, (_, i) => `email:y${call}-${i}@flood.example`),
        `web.fetch#${call}`,
      );
      c.advance(1);
    }
    const { rows } = db.prepare("SELECT count(*) AS rows FROM provenance_memory").get() as { rows: number };
    expect(rows).toBeLessThanOrEqual(110);
  });

  it("refuses a window that is not positive", () => {
    expect(() =>
      createProvenanceMemoryStore(openStateDb(":memory:"), { now: clock().now, key: KEY, rememberMs: 0 }),
    ).toThrow("more than 0 ms");
  });
});
