import type { RateLimiter, RateLimitOutcome } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";
import { PostgresStoreError } from "./postgres-store-error.js";
import { sweepCutoff } from "../rate-limit/sweep-age.js";

/** The PostgreSQL limiter answers asynchronously. */
export interface PostgresRateLimiter extends RateLimiter {
  consume(key: string, limit: number, windowMs: number, nowMs: number): Promise<RateLimitOutcome>;
}

/** Options of {@link createPostgresRateLimiter}. */
export interface PostgresRateLimiterOptions {
  /**
   * Every this many calls (on this node), rows of every key whose window has passed and that are older than a
   * day (and than the longest window given) are deleted (default 1000): see `rate-limit/sweep-age.ts`.
   */
  readonly sweepEvery?: number;
}

function invalid(message: string): PostgresStoreError {
  return new PostgresStoreError("postgres_input_invalid", `rate limiter: ${message}`);
}

function assertArguments(key: string, limit: number, windowMs: number, nowMs: number): void {
  if (typeof key !== "string") throw invalid("key must be a string");
  if (key.includes("\u0000")) throw invalid("key holds a NUL character");
  if (!Number.isSafeInteger(limit) || limit <= 0) throw invalid(`invalid limit \`${limit}\``);
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) throw invalid(`invalid window \`${windowMs}\``);
  if (!Number.isSafeInteger(nowMs)) throw invalid("invalid clock");
}

interface ConsumeRow {
  allowed: boolean;
  counted: number;
  oldest_ms: number | null;
}

/**
 * A sliding-window {@link RateLimiter} shared by every node on the database, with the SQLite limiter's
 * semantics (exact: one row per counted call; a changed limit keeps the calls counted). Each call is one
 * round trip to `acp_rate_limit_consume`, which works under a per-key transaction-scoped advisory lock,
 * so concurrent calls from any nodes never count more than `limit` calls in a window.
 */
export function createPostgresRateLimiter(
  store: PostgresStore,
  options: PostgresRateLimiterOptions = {},
): PostgresRateLimiter {
  const sweepEvery = Math.max(1, options.sweepEvery ?? 1000);
  let calls = 0;
  let longestWindowMs = 0;
  return {
    async consume(key, limit, windowMs, nowMs) {
      assertArguments(key, limit, windowMs, nowMs);
      longestWindowMs = Math.max(longestWindowMs, windowMs);
      if (++calls % sweepEvery === 0) {
        await store.query("DELETE FROM rate_limit_hits WHERE expires_at_ms <= $1 AND at_ms <= $2", [
          nowMs,
          sweepCutoff(nowMs, longestWindowMs),
        ]);
      }
      const result = await store.query<ConsumeRow>(
        "SELECT allowed, counted, oldest_ms FROM acp_rate_limit_consume($1, $2, $3, $4)",
        [key, limit, windowMs, nowMs],
      );
      const row = result.rows[0];
      if (row === undefined)
        throw new PostgresStoreError("postgres_unavailable", "rate limiter: no answer from postgres");
      const oldest = row.oldest_ms;
      return {
        allowed: row.allowed,
        remaining: Math.max(0, limit - row.counted),
        resetAtMs: oldest === null ? nowMs : oldest + windowMs,
      };
    },
  };
}
