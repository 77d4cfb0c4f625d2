import { describe, expect, it } from "vitest";
import { ProgressiveLockout } from "../src/admission/rate-limiter.js";

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
