/**
 * §19.5 / §23.2 / §28 rate limits are sliding windows: no burst at a window's edge gets twice a limit through.
 * The clock is the test's (no timing assertions).
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { WindowCounter } from "../src/admission/rate-limiter.js";
import { startProvider, type Provider } from "./harness.js";

const HOUR = 3_600_000;
const SLICE = HOUR / 20; // the counter's granularity: a hit is forgotten at most this long after the window passed it

let p: Provider | undefined;
afterEach(async () => p?.close());

describe("WindowCounter is a sliding window with bounded memory", () => {
  it("a burst at the end of one hour and another at the start of the next are one window: the second is refused", () => {
    const limit = 10;
    const counter = new WindowCounter(HOUR);
    const t0 = 1_000_000;
    const admitted = (t: number, n: number): number => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (counter.hit("source", t) <= limit) ok += 1;
      return ok;
    };
    expect(admitted(t0, 1)).toBe(1); // a fixed window opened here
    expect(admitted(t0 + HOUR - 1, limit - 1)).toBe(limit - 1); // the rest of the limit, at its very end
    // One millisecond later the fixed window had started afresh and let `limit` more through (19 within 1 ms).
    expect(admitted(t0 + HOUR, limit)).toBe(0);
    // The burst is forgotten once the window has passed it (plus at most one slice), and not before.
    expect(counter.peek("source", t0 + 2 * HOUR - 2)).toBeGreaterThan(limit);
    expect(counter.peek("source", t0 + 2 * HOUR + SLICE)).toBe(0);
    expect(admitted(t0 + 2 * HOUR + SLICE, limit)).toBe(limit);
  });

  it("never counts fewer hits than the window holds, nor more than the window and one slice before it (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: HOUR / 3 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 0, max: HOUR }),
        (gaps, start) => {
          const counter = new WindowCounter(HOUR);
          const times: number[] = [];
          let t = start;
          for (const g of gaps) {
            t += g;
            times.push(t);
            const n = counter.hit("k", t);
            const within = (from: number): number => times.filter((x) => x > from && x <= t).length;
            if (n < within(t - HOUR)) return false; // undercounting is what let twice a limit through
            if (n > within(t - HOUR - SLICE)) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });

  it("holds at most one (slice, count) pair per slice of the window per key, however many hits", () => {
    const counter = new WindowCounter(HOUR);
    for (let i = 0; i < 100_000; i++) counter.hit("busy", i * 1000); // ~28 hours, a hit a second
    const pairs = (counter as unknown as { hits: Map<string, number[]> }).hits.get("busy") ?? [];
    expect(pairs.length).toBeLessThanOrEqual(2 * 21);
    expect(counter.peek("busy", 99_999_000)).toBeGreaterThanOrEqual(3600);
    expect(counter.peek("busy", 99_999_000)).toBeLessThanOrEqual(3600 + SLICE / 1000);
  });
});

describe("§28 the per-range request limit over HTTP slides", () => {
  it("requests at the end of an hour still count at the start of the next: no double budget at the edge", async () => {
    const pr = (p = await startProvider({ requestsPerIpPerHour: 4 }));
    const get = async (): Promise<number> => (await pr.req("api.localhost", "GET", "/.well-known/agent-access")).status;
    expect(await get()).toBe(200); // T0: the old counter's window opened here
    pr.advance(HOUR - 1000);
    expect([await get(), await get(), await get()]).toEqual([200, 200, 200]);
    pr.advance(1000); // the old counter started a new hour here and let 4 more through at once
    expect(await get()).toBe(429);
    // Once the window has passed the burst (plus one slice), the range is served again.
    pr.advance(HOUR + SLICE);
    expect(await get()).toBe(200);
  });
});
