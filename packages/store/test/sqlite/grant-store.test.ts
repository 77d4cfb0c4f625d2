import { describe, expect, it } from "vitest";
import { createConsentGrantStore, openStateDb } from "../../src/index.js";

describe("consent_grants: time-window approvals in state.db", () => {
  it("finds a call's grants that have not ended, the latest ending first, and skips unreadable rows", () => {
    const db = openStateDb(":memory:");
    const grants = createConsentGrantStore(db);
    grants.add("k1", 2_000, { n: 1 }, 0);
    grants.add("k1", 3_000, { n: 2 }, 0);
    grants.add("k2", 3_000, { n: 3 }, 0);
    db.prepare("INSERT INTO consent_grants VALUES ('k1', 5000, '{not json', 0)").run();
    expect(grants.find("k1", 1_000)).toEqual([{ n: 2 }, { n: 1 }]);
    expect(grants.find("k1", 2_000)).toEqual([{ n: 2 }]);
    expect(grants.find("k3", 0)).toEqual([]);
  });

  it("keeps at most 16 grants per call and drops ended ones as new ones come", () => {
    const db = openStateDb(":memory:");
    const grants = createConsentGrantStore(db);
    grants.add("old", 100, {}, 0);
    for (let i = 0; i < 20; i++) grants.add("k", 1_000 + i, { i }, 200);
    const count = (key: string) =>
      (db.prepare("SELECT count(*) AS n FROM consent_grants WHERE key = ?").get(key) as { n: number }).n;
    expect(count("k")).toBe(16);
    expect(count("old")).toBe(0);
    expect(grants.find("k", 0)[0]).toEqual({ i: 19 });
    expect(grants.deleteEnded(1_010)).toBe(7);
    expect(count("k")).toBe(9);
  });
});
