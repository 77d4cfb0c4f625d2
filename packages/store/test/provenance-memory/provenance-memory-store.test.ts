import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProvenanceMemoryStore, FORGOTTEN_SOURCE, openStateDb } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "acp-provenance-memory-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const HOUR = 3_600_000;
const IBAN = "iban:DE89370400440532013000";

function clock(start = Date.parse("2026-11-27T10:00:00Z")) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => void (t += ms) };
}

describe("the provenance memory in state.db", () => {
  it("recalls what was remembered, from another connection to the same file (the salt is the file's)", () => {
    const path = join(dir, `state-${++n}.db`);
    const c = clock();
    const writer = createProvenanceMemoryStore(openStateDb(path), { now: c.now, rememberMs: 24 * HOUR });
    writer.remember([IBAN, "email:billing@attacker.example"], "mail.read_inbox#3");
    const reader = createProvenanceMemoryStore(openStateDb(path), { now: c.now, rememberMs: 24 * HOUR });
    expect(reader.recall(IBAN)).toBe("mail.read_inbox#3");
    expect(reader.recall("email:billing@attacker.example")).toBe("mail.read_inbox#3");
    expect(reader.recall("email:someone@else.example")).toBeUndefined();
  });

  it("keeps salted hashes only: the file holds no identifier read", () => {
    const path = join(dir, `state-${++n}.db`);
    const db = openStateDb(path);
    const store = createProvenanceMemoryStore(db, { now: clock().now, rememberMs: HOUR });
    store.remember([IBAN, "email:billing@attacker.example"], "mail.read_inbox#1");
    db.pragma("wal_checkpoint(TRUNCATE)");
    const bytes = readFileSync(path).toString("latin1");
    expect(bytes).toContain("mail.read_inbox#1");
    expect(bytes).not.toContain("DE89370400440532013000");
    expect(bytes).not.toContain("attacker.example");
    // and another database's salt gives other hashes for the same identity
    const hashes = (p: string) =>
      openStateDb(p)
        .prepare("SELECT identity_hash FROM provenance_memory ORDER BY identity_hash")
        .all()
        .map((r) => (r as { identity_hash: string }).identity_hash);
    const other = join(dir, `state-${++n}.db`);
    createProvenanceMemoryStore(openStateDb(other), { now: clock().now, rememberMs: HOUR }).remember(
      [IBAN, "email:billing@attacker.example"],
      "mail.read_inbox#1",
    );
    expect(hashes(other)).toHaveLength(2);
    expect(hashes(other)).not.toEqual(hashes(path));
  });

  it("forgets an identity a window after it was last seen; seeing it again moves it to now", () => {
    const c = clock();
    const store = createProvenanceMemoryStore(openStateDb(":memory:"), { now: c.now, rememberMs: 24 * HOUR });
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
    const store = createProvenanceMemoryStore(db, { now: c.now, rememberMs: HOUR, maxIdentities: 3 });
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
    const store = createProvenanceMemoryStore(openStateDb(path), { now: c.now, rememberMs: HOUR, maxIdentities: 100 });
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
    const other = createProvenanceMemoryStore(openStateDb(path), { now: c.now, rememberMs: HOUR, maxIdentities: 100 });
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
    const store = createProvenanceMemoryStore(db, { now: c.now, rememberMs: HOUR, maxIdentities: 100 });
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
    expect(() => createProvenanceMemoryStore(openStateDb(":memory:"), { now: clock().now, rememberMs: 0 })).toThrow(
      "more than 0 ms",
    );
  });
});
