/**
 * A fixed-window counter per key, with a clock passed in; memory bounded by pruning keys whose window has passed.
 * Pruning is amortised: past `maxKeys` keys the map is swept, and the next sweep waits until it has doubled again.
 * (Sweeping on every new key past the bound made each new key cost a scan of every live one — a botnet of many
 * ranges, or fresh claim codes from each, turned the counters quadratic.) Live keys are never dropped, so hitting
 * under many fresh keys never resets anyone's count.
 */
export class WindowCounter {
  private readonly hits = new Map<string, { start: number; count: number }>();
  private pruneAt: number;

  /** Counts `windowMs` windows; sweeps passed windows once there are more than `maxKeys` keys. */
  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {
    this.pruneAt = maxKeys;
  }

  /** Adds one hit for `key` at `nowMs` and returns the count in the current window (including it). */
  hit(key: string, nowMs: number): number {
    const cur = this.hits.get(key);
    if (cur === undefined || nowMs - cur.start >= this.windowMs) {
      this.hits.set(key, { start: nowMs, count: 1 });
      if (this.hits.size > this.pruneAt) {
        this.prune(nowMs);
        this.pruneAt = Math.max(this.maxKeys, 2 * this.hits.size);
      }
      return 1;
    }
    cur.count += 1;
    return cur.count;
  }

  /** How many keys are held (live, or passed and not yet swept). */
  get size(): number {
    return this.hits.size;
  }

  /** The count in the current window without adding one. */
  peek(key: string, nowMs: number): number {
    const cur = this.hits.get(key);
    return cur === undefined || nowMs - cur.start >= this.windowMs ? 0 : cur.count;
  }

  /** Drops every key whose window has passed (one scan; see the class comment for when it runs). */
  protected prune(nowMs: number): void {
    for (const [k, v] of this.hits) if (nowMs - v.start >= this.windowMs) this.hits.delete(k);
  }
}

/**
 * Progressive lockout: after `free` failures under a key, each further failure locks the key for
 * `baseMs × 2^(n − free)`, up to `maxMs`. Keys are opaque (an address range, a keyed hash of a typed code),
 * so locking reveals nothing about whether a code exists: unknown codes lock exactly like real ones. A key
 * unlocked and without a failure for `maxMs` starts afresh; past `maxKeys` keys only those are dropped, so
 * failing under many fresh keys (codes are the caller's to choose) never unlocks anyone.
 */
export class ProgressiveLockout {
  private readonly state = new Map<string, { failures: number; until: number; last: number }>();
  private pruneAt: number;

  /** See the class comment. */
  constructor(
    private readonly free: number,
    private readonly baseMs: number,
    private readonly maxMs: number,
    private readonly maxKeys = 100_000,
  ) {
    this.pruneAt = maxKeys;
  }

  /** Whether `key` is locked at `nowMs`. */
  locked(key: string, nowMs: number): boolean {
    const s = this.state.get(key);
    return s !== undefined && s.until > nowMs;
  }

  /** Records a failure under `key`; true when this failure locks the key. */
  fail(key: string, nowMs: number): boolean {
    const prev = this.state.get(key);
    const s = prev === undefined || this.stale(prev, nowMs) ? { failures: 0, until: 0, last: nowMs } : prev;
    s.failures += 1;
    s.last = nowMs;
    if (s.failures > this.free) {
      s.until = nowMs + Math.min(this.maxMs, this.baseMs * 2 ** (s.failures - this.free - 1));
    }
    this.state.set(key, s);
    if (this.state.size > this.pruneAt) {
      for (const [k, v] of this.state) if (this.stale(v, nowMs)) this.state.delete(k);
      // Amortised: the next sweep waits until the map has doubled again.
      this.pruneAt = Math.max(this.maxKeys, 2 * this.state.size);
    }
    return s.until > nowMs;
  }

  /** Unlocked, and no failure for `maxMs`: its history no longer counts. */
  private stale(s: { until: number; last: number }, nowMs: number): boolean {
    return s.until <= nowMs && nowMs - s.last >= this.maxMs;
  }
}
