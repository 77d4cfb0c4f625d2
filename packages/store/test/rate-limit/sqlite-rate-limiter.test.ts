import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeRateLimiter } from "../../../core/test/evaluate/rate-limiter.case.js";
import { createSqliteRateLimiter } from "../../src/rate-limit/index.js";
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
    again.consume("new", 5, 1000, 5000);
    expect(reopened.prepare("SELECT COUNT(*) AS n FROM rate_limit_hits WHERE key = 'old'").get()).toEqual({ n: 0 });
    reopened.close();
  });
});
