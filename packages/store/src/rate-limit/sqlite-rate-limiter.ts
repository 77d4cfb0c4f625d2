import type { Database } from "better-sqlite3";
import type { RateLimiter, RateLimitOutcome } from "@acp/core";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";
import { sweepCutoff } from "./sweep-age.js";

/** The rate-limit table: one row per counted call (a sliding log). */
export const RATE_LIMIT_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "rate-limit/001-hits",
    up: `CREATE TABLE rate_limit_hits (
           key           TEXT    NOT NULL,
           at_ms         INTEGER NOT NULL,
           expires_at_ms INTEGER NOT NULL
         ) STRICT;
         CREATE INDEX rate_limit_hits_key ON rate_limit_hits (key, at_ms);
         CREATE INDEX rate_limit_hits_expiry ON rate_limit_hits (expires_at_ms);`,
  },
];

/** The SQLite limiter answers synchronously (better-sqlite3 is synchronous). */
export interface SqliteRateLimiter extends RateLimiter {
  consume(key: string, limit: number, windowMs: number, nowMs: number): RateLimitOutcome;
}

/** Options of {@link createSqliteRateLimiter}. */
export interface SqliteRateLimiterOptions {
  /**
   * Every this many calls, rows of every key whose window has passed and that are older than a day (and than
   * the longest window given) are deleted (default 1000): see `sweep-age.ts`.
   */
  readonly sweepEvery?: number;
}

function assertArguments(key: string, limit: number, windowMs: number, nowMs: number): void {
  if (typeof key !== "string") throw new TypeError("rate limiter: key must be a string");
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`rate limiter: invalid limit \`${limit}\``);
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`rate limiter: invalid window \`${windowMs}\``);
  }
  if (!Number.isSafeInteger(nowMs)) throw new RangeError("rate limiter: invalid clock");
}

/**
 * A sliding-window {@link RateLimiter} in the state database, shared by every process that opens it:
 * each call runs in one `BEGIN IMMEDIATE` transaction (drop the key's calls that left the window, count
 * the rest, record this call when it fits), so two processes never both take the last slot. Exact: one
 * row per counted call. Unlike the memory limiter, a changed limit or window keeps the calls already
 * counted (a tightened limit applies at once instead of granting a fresh burst).
 */
export function createSqliteRateLimiter(db: Database, options: SqliteRateLimiterOptions = {}): SqliteRateLimiter {
  applyMigrations(db, RATE_LIMIT_MIGRATIONS);
  const sweepEvery = Math.max(1, options.sweepEvery ?? 1000);
  const expire = db.prepare<[string, number]>("DELETE FROM rate_limit_hits WHERE key = ? AND at_ms <= ?");
  const count = db.prepare<[string], { n: number; oldest: number | null }>(
    "SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM rate_limit_hits WHERE key = ?",
  );
  const insert = db.prepare<[string, number, number]>(
    "INSERT INTO rate_limit_hits (key, at_ms, expires_at_ms) VALUES (?, ?, ?)",
  );
  const sweep = db.prepare<[number, number]>("DELETE FROM rate_limit_hits WHERE expires_at_ms <= ? AND at_ms <= ?");
  let calls = 0;
  let longestWindowMs = 0;
  const consume = db.transaction((key: string, limit: number, windowMs: number, nowMs: number): RateLimitOutcome => {
    longestWindowMs = Math.max(longestWindowMs, windowMs);
    if (++calls % sweepEvery === 0) sweep.run(nowMs, sweepCutoff(nowMs, longestWindowMs));
    expire.run(key, nowMs - windowMs);
    const row = count.get(key) ?? { n: 0, oldest: null };
    let n = row.n;
    let oldest = row.oldest;
    const allowed = n < limit;
    if (allowed) {
      insert.run(key, nowMs, nowMs + windowMs);
      n++;
      oldest = oldest === null ? nowMs : Math.min(oldest, nowMs);
    }
    return { allowed, remaining: Math.max(0, limit - n), resetAtMs: oldest === null ? nowMs : oldest + windowMs };
  });
  return {
    consume(key, limit, windowMs, nowMs) {
      assertArguments(key, limit, windowMs, nowMs);
      return consume.immediate(key, limit, windowMs, nowMs);
    },
  };
}
