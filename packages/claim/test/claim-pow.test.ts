import fc from "fast-check";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkPow, leadingZeroBits, solveMidstate, solvePow, solvePowNaive } from "../src/index.js";

describe("sha256_leading_zeros proof-of-work (as documented in discovery)", () => {
  it("counts leading zero bits of a digest", () => {
    expect(leadingZeroBits(new Uint8Array([0, 0, 0x10, 0xff]))).toBe(19);
    expect(leadingZeroBits(new Uint8Array([0x80]))).toBe(0);
    expect(leadingZeroBits(new Uint8Array(32))).toBe(256);
  });

  it("a solution is 1–64 chars of [A-Za-z0-9] with SHA-256(challenge + nonce) ≥ difficulty zero bits", () => {
    const c = "abc";
    const n = solvePowNaive(c, 8) ?? "";
    expect(
      leadingZeroBits(
        createHash("sha256")
          .update(c + n, "utf8")
          .digest(),
      ),
    ).toBeGreaterThanOrEqual(8);
    expect(checkPow(c, n, 8)).toBe(true);
    expect(checkPow(c, "", 0)).toBe(false);
    expect(checkPow(c, "a".repeat(65), 0)).toBe(false);
    expect(checkPow(c, "a-b", 0)).toBe(false);
    expect(checkPow(c, "a".repeat(64), 0)).toBe(true);
  });

  it("the midstate kernel's answers verify for any challenge length and content (property)", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 200 }), fc.integer({ min: 0, max: 61 }), (challenge, lane) => {
        const n = solveMidstate(challenge, 6, lane, 1 << 20);
        expect(n).toBeDefined();
        expect(n).toMatch(/^[A-Za-z0-9]{1,64}$/);
        expect(checkPow(challenge, n ?? "", 6)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("solvePow with worker threads returns a valid nonce", async () => {
    const c = "v1-14-1767225600-0123456789abcdef0123456789abcdef-fedcba9876543210fedcba9876543210";
    const n = await solvePow(c, 14, { workers: 2 });
    expect(checkPow(c, n, 14)).toBe(true);
  });

  it("solvePow stops its workers when its signal aborts, failing with the signal's reason", async () => {
    const c = "v1-40-1767225600-0123456789abcdef0123456789abcdef-fedcba9876543210fedcba9876543210";
    const reason = new Error("the client gave up");
    await expect(solvePow(c, 40, { workers: 2, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const stop = new AbortController();
    const solving = solvePow(c, 40, { workers: 2, signal: stop.signal });
    setTimeout(() => stop.abort(reason), 50);
    // 40 bits would take hours: only the abort ends it (its finally terminates both workers first)
    await expect(solving).rejects.toBe(reason);
  });
});
