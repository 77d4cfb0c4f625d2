import { describe, expect, it } from "vitest";
import { ProgressiveLockout, WindowCounter } from "../src/admission/rate-limiter.js";
import type { FaqBody } from "../src/content/faq.js";
import { PublishedContentIndex } from "../src/content/similarity.js";

const MIN = 60_000;
const HOUR = 60 * MIN;

describe("MUST §19.5 progressive lockout under a flood of keys", () => {
  it("failing under many fresh keys (codes are the caller's to choose) never unlocks a locked range", () => {
    const lockout = new ProgressiveLockout(5, 30_000, HOUR); // as the provider builds it: 100 000 keys
    const t = 1_000_000;
    for (let i = 0; i < 8; i++) lockout.fail("ip:198.51.100.0/24", t);
    expect(lockout.locked("ip:198.51.100.0/24", t + MIN)).toBe(true);
    for (let i = 0; i <= 100_000; i++) lockout.fail(`code:${i}`, t + MIN);
    expect(lockout.locked("ip:198.51.100.0/24", t + MIN)).toBe(true);
    // The lock still ends when it was set to, and keys quiet for the longest lock are forgotten.
    expect(lockout.locked("ip:198.51.100.0/24", t + HOUR)).toBe(false);
  });

  it("a key quiet for longer than the longest lock starts afresh; within it, failures keep counting", () => {
    const lockout = new ProgressiveLockout(2, 1000, HOUR);
    expect(lockout.fail("k", 0)).toBe(false);
    expect(lockout.fail("k", 10)).toBe(false);
    expect(lockout.fail("k", 20)).toBe(true); // third failure: locked
    expect(lockout.fail("k", 30 * MIN)).toBe(true); // still counting (fourth)
    expect(lockout.fail("k", 30 * MIN + HOUR)).toBe(false); // an hour quiet: first failure again
  });
});

/** A counter that counts its sweeps (each one a scan of every key). */
class CountingCounter extends WindowCounter {
  sweeps = 0;
  protected override prune(nowMs: number): void {
    this.sweeps += 1;
    super.prune(nowMs);
  }
}

describe("rate-limit counters under a flood of fresh keys (§19.5 per code, §28 per range)", () => {
  it("150 000 live keys cost one sweep, not one per key past 100 000; a live count is never dropped", () => {
    const counter = new CountingCounter(HOUR); // as the provider builds it: swept past 100 000 keys
    const t = 1_000_000;
    for (let i = 0; i < 3; i++) counter.hit("range:198.51.100.0/24", t);
    for (let i = 0; i < 150_000; i++) counter.hit(`code:${i}`, t + MIN);
    expect(counter.sweeps).toBe(1); // the old counter swept on each of the last 50 000 new keys
    expect(counter.peek("range:198.51.100.0/24", t + MIN)).toBe(3);
    // Once their window has passed, keys are swept away when the map next outgrows its bound.
    for (let i = 0; i < 300_001; i++) counter.hit(`later:${i}`, t + 2 * HOUR);
    expect(counter.sweeps).toBeLessThanOrEqual(4); // amortised: each sweep waits for the map to double
    expect(counter.size).toBe(300_001); // the 150 001 keys of the passed window are gone
    expect(counter.peek("range:198.51.100.0/24", t + 2 * HOUR)).toBe(0);
  });
});

/** The content-similarity index (§23.3), counting its sweeps. */
class CountingIndex extends PublishedContentIndex {
  sweeps = 0;
  protected override prune(nowMs: number): void {
    this.sweeps += 1;
    super.prune(nowMs);
  }
}

const faq = (answer: string): FaqBody => ({
  title: "Acme",
  slug: "acme",
  description: "",
  settings: { theme: "auto", accent_color: "#000000", show_search: true, show_feedback: false },
  questions: [{ id: "q_1", question: "What?", answer, order: 0 }],
});

describe("content similarity (§23.3) under a flood of edits to published content", () => {
  it("75 000 distinct recent fingerprints cost one sweep, not one per fingerprint past 50 000; limits still hold", () => {
    const index = new CountingIndex(3);
    const t = 1_000_000;
    for (let i = 0; i < 75_000; i++) index.record(`sbx_${i % 100}`, faq(`answer ${i}`), t);
    expect(index.sweeps).toBe(1); // the old index swept on each of the last 25 000 new fingerprints
    expect(index.size).toBe(75_000);
    for (const id of ["sbx_a", "sbx_b", "sbx_c"]) index.record(id, faq("common"), t);
    expect(index.tooCommon("sbx_d", faq("common"), t + MIN)).toBe(true);
    // A day later the old fingerprints go at the next sweep.
    for (let i = 0; i < 150_010; i++) index.record("sbx_x", faq(`later ${i}`), t + 25 * HOUR);
    expect(index.size).toBe(150_010);
    expect(index.tooCommon("sbx_d", faq("common"), t + 25 * HOUR)).toBe(false);
  });
});

describe("content similarity (§23.3): the undo of a record whose store write did not commit", () => {
  it("drops only that record: an earlier publication of the same content by the sandbox, and later ones, stay", () => {
    const index = new PublishedContentIndex(1);
    const t = 1_000_000;
    index.record("sbx_a", faq("common"), t);
    expect(index.tooCommon("sbx_b", faq("common"), t)).toBe(true);
    index.record("sbx_a", faq("common"), t + 1)(); // a failed re-publication: the first record is put back
    expect(index.tooCommon("sbx_b", faq("common"), t + 1)).toBe(true);
    const undoEarlier = index.record("sbx_d", faq("common"), t + 2);
    index.record("sbx_d", faq("common"), t + 3); // stored, after the earlier write of the same content
    undoEarlier(); // the earlier write failed: the later record stays
    expect(index.tooCommon("sbx_a", faq("common"), t + 3)).toBe(true);
    index.record("sbx_a", faq("common"), t + 4)(); // sbx_a's failed edit: its first record is back, sbx_d's stays
    expect(index.tooCommon("sbx_b", faq("common"), t + 4)).toBe(true);
    index.record("sbx_c", faq("other"), t)();
    expect(index.size).toBe(1); // a fingerprint left with no sandbox goes
  });
});
