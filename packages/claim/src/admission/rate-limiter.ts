/** A fixed-window counter per key, with a clock passed in; memory bounded by periodic pruning. */
export class WindowCounter {
  private readonly hits = new Map<string, { start: number; count: number }>();

  /** Counts `windowMs` windows. */
  constructor(private readonly windowMs: number) {}

  /** Adds one hit for `key` at `nowMs` and returns the count in the current window (including it). */
  hit(key: string, nowMs: number): number {
    const cur = this.hits.get(key);
    if (cur === undefined || nowMs - cur.start >= this.windowMs) {
      this.hits.set(key, { start: nowMs, count: 1 });
      if (this.hits.size > 100_000) this.prune(nowMs);
      return 1;
    }
    cur.count += 1;
    return cur.count;
  }

  /** The count in the current window without adding one. */
  peek(key: string, nowMs: number): number {
    const cur = this.hits.get(key);
    return cur === undefined || nowMs - cur.start >= this.windowMs ? 0 : cur.count;
  }

  private prune(nowMs: number): void {
    for (const [k, v] of this.hits) if (nowMs - v.start >= this.windowMs) this.hits.delete(k);
  }
}

/**
 * Progressive lockout: after `free` failures under a key, each further failure locks the key for
 * `baseMs × 2^(n − free)`, up to `maxMs`. Keys are opaque (an address range, a keyed hash of a typed code),
 * so locking reveals nothing about whether a code exists: unknown codes lock exactly like real ones.
 */
export class ProgressiveLockout {
  private readonly state = new Map<string, { failures: number; until: number }>();

  /** See the class comment. */
  constructor(
    private readonly free: number,
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  /** Whether `key` is locked at `nowMs`. */
  locked(key: string, nowMs: number): boolean {
    const s = this.state.get(key);
    return s !== undefined && s.until > nowMs;
  }

  /** Records a failure under `key`; true when this failure locks the key. */
  fail(key: string, nowMs: number): boolean {
    const s = this.state.get(key) ?? { failures: 0, until: 0 };
    s.failures += 1;
    if (s.failures > this.free) {
      s.until = nowMs + Math.min(this.maxMs, this.baseMs * 2 ** (s.failures - this.free - 1));
    }
    this.state.set(key, s);
    if (this.state.size > 100_000) this.state.clear();
    return s.until > nowMs;
  }
}
