import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeRateLimiter } from "../../../core/test/evaluate/rate-limiter.case.js";
import { createSqliteRateLimiter, RATE_LIMIT_SWEEP_AGE_MS } from "../../src/rate-limit/index.js";
import { openStateDb } from "../../src/sqlite/index.js";

describeRateLimiter("sqlite", () => createSqliteRateLimiter(openStateDb(":memory:")));

describe("sqlite rate limiter", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-rate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("shares one window between two connections to the same file", () => {
    const path = join(dir, "state.db");
    const a = createSqliteRateLimiter(openStateDb(path));
    const b = createSqliteRateLimiter(openStateDb(path));
    const outcomes = [a, b, a, b].map((l, i) => l.consume("send", 3, 60_000, 1_000_000 + i));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false]);
  });

  it("keeps counted calls across a reopen and sweeps rows of windows that passed", () => {
    const path = join(dir, "sweep.db");
    const db = openStateDb(path);
    const limiter = createSqliteRateLimiter(db, { sweepEvery: 2 });
    limiter.consume("old", 5, 1000, 0);
    db.close();
    const reopened = openStateDb(path);
    const again = createSqliteRateLimiter(reopened, { sweepEvery: 2 });
    expect(again.consume("old", 5, 1000, 10)).toMatchObject({ allowed: true, remaining: 3 });
    again.consume("new", 5, 1000, 5000); // a sweep: its rows are within a day, the longest window, so they stay
    expect(reopened.prepare("SELECT COUNT(*) AS n FROM rate_limit_hits WHERE key = 'old'").get()).toEqual({ n: 2 });
    again.consume("new", 5, 1000, RATE_LIMIT_SWEEP_AGE_MS + 20);
    again.consume("new", 5, 1000, RATE_LIMIT_SWEEP_AGE_MS + 30); // the next sweep, a day later: they go
    expect(reopened.prepare("SELECT COUNT(*) AS n FROM rate_limit_hits WHERE key = 'old'").get()).toEqual({ n: 0 });
    reopened.close();
  });

  it("counts the calls made before a window was widened, also across a sweep of old rows", () => {
    // a rule's `2/minute` tightened to `2/hour`: the two calls of the last minute still count for the hour,
    // on every call: the sweep of rows whose recorded (minute) window passed used to drop them
    const limiter = createSqliteRateLimiter(openStateDb(":memory:"), { sweepEvery: 1 });
    expect(limiter.consume("policy:send", 2, 60_000, 0).allowed).toBe(true);
    expect(limiter.consume("policy:send", 2, 60_000, 1).allowed).toBe(true);
    expect(limiter.consume("policy:send", 2, 3_600_000, 120_000)).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.consume("policy:send", 2, 3_600_000, 1_800_000)).toMatchObject({ allowed: false });
    expect(limiter.consume("policy:send", 2, 3_600_000, 3_600_001).allowed).toBe(true); // the hour has passed
  });
});
