import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPendingConsentStore, openPendingConsentDb, openStateDb, type NewPendingConsent } from "../src/index.js";

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
});
