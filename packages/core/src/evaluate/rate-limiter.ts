/** The answer of a rate limiter for one call. */
export interface RateLimitOutcome {
  /** Whether this call fits in the limit (and was counted). A refused call is not counted. */
  readonly allowed: boolean;
  /** Calls still allowed in the current window after this one. */
  readonly remaining: number;
  /** When (ms since the epoch) the window next frees a slot; `nowMs` when nothing is counted. */
  readonly resetAtMs: number;
}

/**
 * Rate-limit state behind one interface: memory here, SQLite/PostgreSQL in the store package. Each call
 * is checked against a sliding window: at most `limit` counted calls in any `windowMs` span ending now.
 * Implementations throw (or reject) on a non-positive limit or window; the evaluator refuses on any error.
 */
export interface RateLimiter {
  consume(key: string, limit: number, windowMs: number, nowMs: number): RateLimitOutcome | Promise<RateLimitOutcome>;
}

/** The in-memory limiter answers synchronously. */
export interface MemoryRateLimiter extends RateLimiter {
  consume(key: string, limit: number, windowMs: number, nowMs: number): RateLimitOutcome;
}

/** Options of {@link createMemoryRateLimiter}. */
export interface MemoryRateLimiterOptions {
  /** Most keys held at once (default 10,000). A new key beyond it is refused unless expired keys free room. */
  readonly maxKeys?: number;
  /** Limits up to this are counted exactly (one timestamp per call); larger ones in 64 buckets (default 1,000). */
  readonly exactUpTo?: number;
}

interface Window {
  readonly limit: number;
  readonly windowMs: number;
  /** Time after which the entry holds nothing in-window. */
  lastMs: number;
  consume(nowMs: number): RateLimitOutcome;
}

/** Exact sliding log: one timestamp per counted call, at most `limit` of them. */
function createExactWindow(limit: number, windowMs: number): Window {
  const stamps: number[] = [];
  let head = 0;
  return {
    limit,
    windowMs,
    lastMs: Number.NEGATIVE_INFINITY,
    consume(nowMs) {
      while (head < stamps.length && (stamps[head] as number) + windowMs <= nowMs) head++;
      if (head > 64 && head * 2 > stamps.length) {
        stamps.splice(0, head);
        head = 0;
      }
      const count = stamps.length - head;
      const allowed = count < limit;
      if (allowed) {
        stamps.push(nowMs);
        this.lastMs = Math.max(this.lastMs, nowMs);
      }
      const oldest = stamps[head];
      const resetAtMs = oldest === undefined ? nowMs : oldest + windowMs;
      return { allowed, remaining: limit - (stamps.length - head), resetAtMs };
    },
  };
}

const BUCKETS = 64;

/**
 * Bucketed sliding window for large limits: 64 buckets per window. A bucket counts while any part of it
 * is inside the window, so the count can only be too high: a call may be refused up to one bucket
 * (1/64 of the window) early, never allowed beyond the limit. A clock that steps back is read as the
 * latest time a call was counted at (buckets newer than `now` were skipped, and a spent limit let as many
 * calls again through), so calls counted "later" stay counted, as the exact log keeps them.
 */
function createBucketWindow(limit: number, windowMs: number): Window {
  const width = windowMs / BUCKETS;
  const ids = new Float64Array(BUCKETS + 1).fill(Number.NEGATIVE_INFINITY);
  const counts = new Float64Array(BUCKETS + 1);
  return {
    limit,
    windowMs,
    lastMs: Number.NEGATIVE_INFINITY,
    consume(nowMs) {
      const at = Math.max(nowMs, this.lastMs);
      const current = Math.floor(at / width);
      let count = 0;
      let oldest = Number.POSITIVE_INFINITY;
      for (let i = 0; i <= BUCKETS; i++) {
        const id = ids[i] as number;
        if (id < current - BUCKETS || id > current) continue;
        count += counts[i] as number;
        if ((counts[i] as number) > 0) oldest = Math.min(oldest, id);
      }
      const allowed = count < limit;
      if (allowed) {
        const slot = ((current % (BUCKETS + 1)) + BUCKETS + 1) % (BUCKETS + 1);
        if (ids[slot] !== current) {
          ids[slot] = current;
          counts[slot] = 0;
        }
        counts[slot] = (counts[slot] as number) + 1;
        count++;
        oldest = Math.min(oldest, current);
        this.lastMs = at;
      }
      const resetAtMs = count === 0 ? nowMs : (oldest + 1) * width + windowMs;
      return { allowed, remaining: limit - count, resetAtMs };
    },
  };
}

function assertArguments(key: string, limit: number, windowMs: number, nowMs: number): void {
  if (typeof key !== "string") throw new TypeError("rate limiter: key must be a string");
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`rate limiter: invalid limit \`${limit}\``);
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(`rate limiter: invalid window \`${windowMs}\``);
  }
  if (!Number.isFinite(nowMs)) throw new RangeError("rate limiter: invalid clock");
}

/**
 * An in-memory sliding-window rate limiter (one process). Memory is bounded: at most `maxKeys` keys, each
 * holding at most min(limit, `exactUpTo`) timestamps or 65 bucket counters. When the key table is full,
 * keys whose windows have passed are dropped; if none has, the new key is refused (fail closed) rather than
 * evicting a live count. A key whose limit or window changes (a reloaded policy) starts a new count.
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const maxKeys = options.maxKeys ?? 10_000;
  const exactUpTo = options.exactUpTo ?? 1_000;
  const windows = new Map<string, Window>();
  const sweep = (nowMs: number): void => {
    for (const [key, w] of windows) if (w.lastMs + w.windowMs <= nowMs) windows.delete(key);
  };
  return {
    consume(key, limit, windowMs, nowMs) {
      assertArguments(key, limit, windowMs, nowMs);
      let window = windows.get(key);
      if (window === undefined || window.limit !== limit || window.windowMs !== windowMs) {
        if (window === undefined && windows.size >= maxKeys) sweep(nowMs);
        if (window === undefined && windows.size >= maxKeys) {
          return { allowed: false, remaining: 0, resetAtMs: nowMs + windowMs };
        }
        window = limit <= exactUpTo ? createExactWindow(limit, windowMs) : createBucketWindow(limit, windowMs);
        windows.set(key, window);
      }
      return window.consume(nowMs);
    },
  };
}
