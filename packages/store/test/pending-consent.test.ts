import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createPendingConsentStore,
  currentOwner,
  listAppliedMigrations,
  openPendingConsentDb,
  openStateDb,
  ownerState,
  type NewPendingConsent,
} from "../src/index.js";

const T0 = Date.parse("2026-01-15T12:00:00Z");

function row(id: string, overrides: Partial<NewPendingConsent> = {}): NewPendingConsent {
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s1",
    server: "fs",
    tool: "write_file",
    request: { id, action: { parameters: { path: "/tmp/x" } } },
    reasons: [{ code: "rule_matched" }],
    createdAtMs: T0,
    expiresAtMs: T0 + 60_000,
    ...overrides,
  };
}

describe("pending-consent store", () => {
  it("creates its table idempotently and lists only pending, unexpired requests, oldest first", () => {
    const db = openStateDb(":memory:");
    createPendingConsentStore(db);
    const store = createPendingConsentStore(db);
    store.insert(row("cr_b", { createdAtMs: T0 + 1 }));
    store.insert(row("cr_a"));
    store.insert(row("cr_old", { expiresAtMs: T0 + 10 }));
    expect(store.listPending(T0 + 100).map((r) => r.id)).toEqual(["cr_a", "cr_b"]);
    expect(store.get("cr_a")).toMatchObject({
      status: "pending",
      sessionId: "s1",
      request: { id: "cr_a" },
      answer: null,
    });
    db.close();
  });

  it("records an answer once; a second answer, an unknown id or an expired request is refused", () => {
    const db = openStateDb(":memory:");
    const store = createPendingConsentStore(db);
    store.insert(row("cr_a"));
    store.insert(row("cr_e", { expiresAtMs: T0 + 10 }));
    expect(store.decide("cr_a", "approved", { by: "me" }, T0 + 1)).toMatchObject({
      ok: true,
      row: { status: "approved", answer: { by: "me" } },
    });
    expect(store.decide("cr_a", "denied", {}, T0 + 2)).toEqual({
      ok: false,
      code: "consent_request_already_decided",
      status: "approved",
    });
    expect(store.decide("cr_x", "approved", {}, T0)).toEqual({ ok: false, code: "consent_request_unknown" });
    expect(store.decide("cr_e", "approved", {}, T0 + 10)).toMatchObject({ ok: false, code: "consent_request_expired" });
    expect(store.get("cr_e")?.status).toBe("pending");
    db.close();
  });

  it("settles only a pending row and purges settled rows", () => {
    const db = openStateDb(":memory:");
    const store = createPendingConsentStore(db);
    store.insert(row("cr_a"));
    expect(store.settle("cr_a", "withdrawn", T0 + 1)).toBe(true);
    expect(store.settle("cr_a", "approved", T0 + 2)).toBe(false);
    expect(store.get("cr_a")?.status).toBe("withdrawn");
    expect(store.deleteSettledBefore(T0 + 1)).toBe(1);
    expect(store.get("cr_a")).toBeNull();
    db.close();
  });

  it("lets exactly one of two processes' answers win on a shared file (WAL)", () => {
    const path = join(mkdtempSync(join(tmpdir(), "acp-pending-")), "state.db");
    const one = openPendingConsentDb(path);
    const two = openPendingConsentDb(path);
    expect(one.pragma("journal_mode", { simple: true })).toBe("wal");
    const a = createPendingConsentStore(one);
    const b = createPendingConsentStore(two);
    a.insert(row("cr_a"));
    const results = [b.decide("cr_a", "approved", { who: "b" }, T0), a.decide("cr_a", "denied", { who: "a" }, T0)];
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(a.get("cr_a")).toMatchObject({ status: "approved", answer: { who: "b" } });
    one.close();
    two.close();
  });

  it("answers busy, writing nothing, when another process holds the write lock past the busy timeout", () => {
    const path = join(mkdtempSync(join(tmpdir(), "acp-pending-")), "state.db");
    const mine = openPendingConsentDb(path);
    const other = openPendingConsentDb(path);
    const store = createPendingConsentStore(mine);
    mine.pragma("busy_timeout = 50");
    other.exec("BEGIN IMMEDIATE");
    try {
      expect(store.insertWithinLimit(row("cr_locked"), { max: 10 })).toEqual({ ok: false, full: "busy" });
    } finally {
      other.exec("ROLLBACK");
    }
    expect(store.get("cr_locked")).toBeNull();
    expect(store.insertWithinLimit(row("cr_after"), { max: 10 })).toEqual({ ok: true });
    mine.close();
    other.close();
  });

  it("never lets a row be decided twice, whatever the sequence of answers (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("approved", "denied"), fc.integer({ min: 0, max: 120_000 })), {
          maxLength: 12,
        }),
        (answers) => {
          const db = openStateDb(":memory:");
          const store = createPendingConsentStore(db);
          store.insert(row("cr_p"));
          const wins = answers.filter(([status, at]) => store.decide("cr_p", status, {}, T0 + at).ok);
          const firstValid = answers.find(([, at]) => T0 + at < T0 + 60_000);
          expect(wins.length).toBe(firstValid === undefined ? 0 : 1);
          if (firstValid !== undefined) expect(store.get("cr_p")?.status).toBe(firstValid[0]);
          db.close();
        },
      ),
    );
  });

  describe("the owner of a row: the process that waits for its answer", () => {
    // a process that has exited (and been reaped): its pid no longer exists
    const gonePid = (): number => spawnSync(process.execPath, ["-e", ""]).pid ?? 0;

    it("is the process the store was given (acp proxy gives itself), and it is running", () => {
      const db = openStateDb(":memory:");
      const store = createPendingConsentStore(db, { owner: currentOwner() });
      store.insert(row("cr_mine"));
      const owner = store.get("cr_mine")?.owner ?? null;
      expect(owner).toEqual(currentOwner());
      expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
      expect(ownerState(owner)).toBe("running");
      expect(store.settleOrphaned(T0)).toEqual([]);
      expect(store.get("cr_mine")?.status).toBe("pending");
      db.close();
    });

    it("is gone when its pid no longer exists, or now belongs to a process started at another time", () => {
      const db = openStateDb(":memory:");
      const dead = createPendingConsentStore(db, { owner: { pid: gonePid(), host: hostname(), start: null } });
      const reused = createPendingConsentStore(db, {
        owner: { pid: process.pid, host: hostname(), start: `${currentOwner().start ?? "boot"}0` },
      });
      const elsewhere = createPendingConsentStore(db, { owner: { pid: 1, host: `not-${hostname()}`, start: "1" } });
      dead.insert(row("cr_dead"));
      reused.insert(row("cr_reused", { createdAtMs: T0 + 1 }));
      elsewhere.insert(row("cr_elsewhere", { createdAtMs: T0 + 2 }));
      expect(ownerState(dead.get("cr_dead")?.owner ?? null)).toBe("gone");
      expect(ownerState(dead.get("cr_reused")?.owner ?? null)).toBe("gone");
      expect(ownerState(dead.get("cr_elsewhere")?.owner ?? null)).toBe("unknown");
      // a pid of another pid namespace (a container of the same name sharing the file) is never taken for gone
      const [boot, , ticks] = (currentOwner().start ?? "b:n:t").split(":");
      const container = { pid: gonePid(), host: hostname(), start: `${boot}:1:${ticks}` };
      expect(ownerState(container)).toBe("unknown");
      const settled = dead.settleOrphaned(T0 + 5);
      expect(settled.map((r) => [r.id, r.status])).toEqual([
        ["cr_dead", "pending"],
        ["cr_reused", "pending"],
      ]);
      expect(dead.get("cr_dead")).toMatchObject({ status: "withdrawn", decidedAtMs: T0 + 5 });
      expect(dead.get("cr_elsewhere")?.status).toBe("pending");
      // settled once: a second look finds nothing
      expect(dead.settleOrphaned(T0 + 6)).toEqual([]);
      db.close();
    });

    it("an older state.db (no owner columns, rows in it) opens fine: the columns are added, its rows have no owner", () => {
      const path = join(mkdtempSync(join(tmpdir(), "acp-pending-old-")), "state.db");
      const old = openStateDb(path);
      old.exec(`CREATE TABLE pending_consent (
        id TEXT PRIMARY KEY, nonce TEXT NOT NULL, session_id TEXT, server TEXT NOT NULL, tool TEXT NOT NULL,
        request_json TEXT NOT NULL, reasons_json TEXT NOT NULL, created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'withdrawn')),
        answer_json TEXT, decided_at_ms INTEGER)`);
      old
        .prepare(
          `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms)
           VALUES ('cr_old', 'n', 'fs', 'write_file', '{}', '[]', ?, ?)`,
        )
        .run(T0, T0 + 60_000);
      old.close();
      const db = openPendingConsentDb(path);
      expect(listAppliedMigrations(db)).toContain("pending-consent/001-owner");
      const store = createPendingConsentStore(db);
      expect(store.get("cr_old")).toMatchObject({ status: "pending", owner: null });
      expect(ownerState(null)).toBe("unknown");
      expect(store.settleOrphaned(T0)).toEqual([]);
      createPendingConsentStore(db, { owner: currentOwner() }).insert(row("cr_new"));
      expect(store.get("cr_new")?.owner).toEqual(currentOwner());
      db.close();
    });

    it("is none for a store given none (acp serve's rows outlive its process: any node may complete them)", () => {
      const db = openStateDb(":memory:");
      const store = createPendingConsentStore(db);
      store.insert(row("cr_serve"));
      expect(store.get("cr_serve")?.owner).toBeNull();
      expect(store.settleOrphaned(T0)).toEqual([]);
      expect(store.get("cr_serve")?.status).toBe("pending");
      db.close();
    });
  });
});
