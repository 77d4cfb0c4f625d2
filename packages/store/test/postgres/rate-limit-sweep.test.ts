/**
 * A rule's window widened on the nodes (`2/minute` to `2/hour`): the calls counted under the minute still
 * count for the hour. The limiter's periodic sweep deleted every row whose recorded (minute) window had
 * passed, on whichever node swept, so a sweep tick handed the key a fresh hour. Now the sweep leaves rows
 * younger than a day (the longest window a policy names) and than any window the node was given.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresRateLimiter, openPostgresStore, type PostgresStore } from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const open: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

describe("the shared rate limit after a window was widened", () => {
  it("counts the calls made under the old window on every node, also across a sweep", async () => {
    const [a, b] = await Promise.all([openPostgresStore(db.url), openPostgresStore(db.url)]);
    open.push(a, b);
    const before = createPostgresRateLimiter(a);
    const after = createPostgresRateLimiter(b, { sweepEvery: 1 }); // sweeps on every call
    expect((await before.consume("policy:send", 2, 60_000, 0)).allowed).toBe(true);
    expect((await before.consume("policy:send", 2, 60_000, 1)).allowed).toBe(true);
    expect(await after.consume("policy:send", 2, 3_600_000, 120_000)).toMatchObject({ allowed: false, remaining: 0 });
    expect((await after.consume("policy:send", 2, 3_600_000, 1_800_000)).allowed).toBe(false);
    expect((await after.consume("policy:send", 2, 3_600_000, 3_600_001)).allowed).toBe(true); // the hour passed
    const rows = await a.query<{ n: number }>("SELECT count(*)::int AS n FROM rate_limit_hits");
    expect(rows.rows[0]?.n).toBe(1);
  });
});
