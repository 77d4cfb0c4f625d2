/**
 * A sliding-window counter per key, with a clock passed in. The window is cut into `buckets` slices and a count
 * is the sum of the slices the window `(now − windowMs, now]` touches, the oldest one whole: every hit inside the
 * window is counted (a fixed window let a burst at its end and another at the start of the next through, twice a
 * limit within moments), and a hit leaves the count at most one slice (`windowMs / buckets`) after the window
 * has passed it — the error is always on the side of refusing. Every hit counts, refused or not: a client
 * sending faster than the limit stays over it until it slows down.
 *
 * Memory is bounded: a key holds at most `buckets + 1` (slice, count) pairs, only for slices it has hits in, and
 * keys whose newest slice has left the window are pruned. Pruning is amortised: past `maxKeys` keys the map is
 * swept, and the next sweep waits until it has doubled again. (Sweeping on every new key past the bound made
 * each new key cost a scan of every live one — a botnet of many ranges, or fresh claim codes from each, turned
 * the counters quadratic.) Live keys are never dropped, so hitting under many fresh keys never resets anyone's
 * count.
 */
export class WindowCounter {
  /** Per key, ascending (slice, count) pairs, flattened. */
  private readonly hits = new Map<string, number[]>();
  private readonly sliceMs: number;
  private pruneAt: number;

  /** Counts over a sliding `windowMs`, in `buckets` slices; sweeps passed keys past `maxKeys` keys. */
  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
    private readonly buckets = 20,
  ) {
    // Rounded up: `buckets` slices always cover the whole window.
    this.sliceMs = Math.max(1, Math.ceil(windowMs / buckets));
    this.pruneAt = maxKeys;
  }

  /** Adds one hit for `key` at `nowMs` and returns the count in the window ending at `nowMs` (including it). */
  hit(key: string, nowMs: number): number {
    const cur = this.slice(nowMs);
    const pairs = this.hits.get(key);
    if (pairs === undefined) {
      this.hits.set(key, [cur, 1]);
      if (this.hits.size > this.pruneAt) {
        this.prune(nowMs);
        this.pruneAt = Math.max(this.maxKeys, 2 * this.hits.size);
      }
      return 1;
    }
    this.dropPassed(pairs, cur);
    const last = pairs.length - 2;
    // A clock that stepped back adds to the newest slice (never to a slice already dropped).
    if (last >= 0 && (pairs[last] as number) >= cur) pairs[last + 1] = (pairs[last + 1] as number) + 1;
    else pairs.push(cur, 1);
    return this.sum(pairs);
  }

  /** How many keys are held (live, or passed and not yet swept). */
  get size(): number {
    return this.hits.size;
  }

  /** The count in the window ending at `nowMs`, without adding one. */
  peek(key: string, nowMs: number): number {
    const pairs = this.hits.get(key);
    if (pairs === undefined) return 0;
    const oldest = this.slice(nowMs) - this.buckets;
    let n = 0;
    for (let i = 0; i < pairs.length; i += 2) if ((pairs[i] as number) >= oldest) n += pairs[i + 1] as number;
    return n;
  }

  /**
   * How long from `nowMs` until one more hit under `key` would count at most `limit` — 0 when it would now —
   * if no hit comes in between (every hit counts, refused or not). It is when the oldest counted slices have
   * left the window, enough of them to leave room: up to the window and one slice, not a fixed minute. A
   * `limit` below 1 is never met: the longest wait ({@link longestWaitMs}).
   */
  waitMs(key: string, limit: number, nowMs: number): number {
    if (limit < 1) return this.longestWaitMs;
    const pairs = this.hits.get(key);
    if (pairs === undefined) return 0;
    const oldest = this.slice(nowMs) - this.buckets;
    let n = this.peek(key, nowMs);
    for (let i = 0; i < pairs.length && n + 1 > limit; i += 2) {
      const slice = pairs[i] as number;
      if (slice < oldest) continue;
      n -= pairs[i + 1] as number;
      // A hit in slice `s` is counted while `slice(t) - buckets <= s`: it has left at the start of slice s+buckets+1.
      if (n + 1 <= limit) return Math.max(1, (slice + this.buckets + 1) * this.sliceMs - nowMs);
    }
    return 0;
  }

  /** The longest {@link waitMs} can be: a hit now leaves the count at most the window and one slice later. */
  get longestWaitMs(): number {
    return (this.buckets + 1) * this.sliceMs;
  }

  /** Drops every key whose newest slice has left the window (one scan; see the class comment for when it runs). */
  protected prune(nowMs: number): void {
    const oldest = this.slice(nowMs) - this.buckets;
    for (const [k, pairs] of this.hits) if ((pairs[pairs.length - 2] as number) < oldest) this.hits.delete(k);
  }

  private slice(nowMs: number): number {
    return Math.floor(nowMs / this.sliceMs);
  }

  /** Removes the leading pairs whose slice has left the window ending in slice `cur`. */
  private dropPassed(pairs: number[], cur: number): void {
    const oldest = cur - this.buckets;
    let i = 0;
    while (i < pairs.length && (pairs[i] as number) < oldest) i += 2;
    if (i > 0) pairs.splice(0, i);
  }

  private sum(pairs: number[]): number {
    let n = 0;
    for (let i = 1; i < pairs.length; i += 2) n += pairs[i] as number;
    return n;
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

  /** How long `key` stays locked from `nowMs` (0 when it is not locked). */
  remainingMs(key: string, nowMs: number): number {
    const s = this.state.get(key);
    return s === undefined ? 0 : Math.max(0, s.until - nowMs);
  }

  /** The longest a key is locked after a failure (the lockout's ceiling). */
  get longestMs(): number {
    return this.maxMs;
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
