/**
 * A 429 (and the breaker's 503) says when a retry can succeed, computed from the sliding window (or lockout,
 * or breaker) that refused — not a fixed `Retry-After: 60`, which a window can take up to an hour past.
 * The clock is the test's (no timing assertions).
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ProgressiveLockout, WindowCounter } from "../src/admission/rate-limiter.js";
import {
  cookiesOf,
  createSandbox,
  humanClaim,
  num,
  publishFaq,
  SAMPLE_FAQ,
  shape,
  solve,
  startProvider,
  str,
  type Provider,
  type Res,
} from "./harness.js";

const HOUR = 3_600_000;
const SLICE = HOUR / 20;
const MIN = 60_000;

let p: Provider | undefined;
afterEach(async () => p?.close());

const retryAfter = (r: Res): number => Number(r.headers["retry-after"]);

/** A 429's body says the header's wait too: `retry_after_seconds` and "try again in N s" (the code and message kept). */
function expectBodySaysWait(r: Res): void {
  const n = retryAfter(r);
  expect(r.status).toBe(429);
  expect(r.json()).toEqual({
    error: { code: "claim_rate_limited", message: `too many requests; try again in ${n} s`, retry_after_seconds: n },
  });
}

describe("WindowCounter.waitMs is when the oldest counted slices leave room", () => {
  it("after a burst the wait is the window (plus under a slice), not a minute; one ms earlier is still too soon", () => {
    const c = new WindowCounter(HOUR);
    const t0 = 5 * HOUR + 1234;
    for (let i = 0; i < 4; i++) c.hit("k", t0);
    expect(c.hit("k", t0)).toBe(5); // over a limit of 4
    const w = c.waitMs("k", 4, t0);
    expect(w).toBeGreaterThan(HOUR);
    expect(w).toBeLessThanOrEqual(HOUR + SLICE);
    expect(c.peek("k", t0 + w - 1) + 1).toBeGreaterThan(4);
    expect(c.peek("k", t0 + w) + 1).toBeLessThanOrEqual(4);
  });

  it("only as many old slices as make room need to leave: hits half an hour ago free the slot half an hour on", () => {
    const c = new WindowCounter(HOUR);
    const t0 = 7 * HOUR;
    c.hit("k", t0);
    c.hit("k", t0);
    c.hit("k", t0 + 30 * MIN);
    expect(c.hit("k", t0 + 30 * MIN)).toBe(4);
    const w = c.waitMs("k", 3, t0 + 30 * MIN);
    expect(w).toBeGreaterThan(30 * MIN);
    expect(w).toBeLessThanOrEqual(30 * MIN + SLICE);
    expect(c.waitMs("k", 5, t0 + 30 * MIN)).toBe(0); // room now
    expect(c.waitMs("other", 1, t0)).toBe(0);
    expect(c.waitMs("k", 0, t0)).toBe(c.longestWaitMs); // a limit of 0 never has room
  });

  it("is the first moment a hit fits, if nothing else comes (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: HOUR / 4 }), { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 0, max: HOUR }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: HOUR }),
        (gaps, start, limit, later) => {
          const c = new WindowCounter(HOUR);
          let t = start;
          for (const g of gaps) c.hit("k", (t += g));
          const now = t + later;
          const w = c.waitMs("k", limit, now);
          const fits = (at: number): boolean => c.peek("k", at) + 1 <= limit;
          if (w === 0) return fits(now);
          return !fits(now + w - 1) && fits(now + w) && w <= c.longestWaitMs;
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a lockout says how long it has left", () => {
    const l = new ProgressiveLockout(1, 30_000, HOUR);
    expect(l.remainingMs("k", 0)).toBe(0);
    l.fail("k", 0);
    expect(l.fail("k", 1000)).toBe(true);
    expect(l.remainingMs("k", 1000)).toBe(30_000);
    expect(l.remainingMs("k", 31_000)).toBe(0);
  });
});

describe("the 429 over HTTP says the real wait", () => {
  it("§28 per range: Retry-After is when the oldest hits leave the window; retrying after 60 s is still refused", async () => {
    const pr = (p = await startProvider({ requestsPerIpPerHour: 4 }));
    const get = async (from: string): Promise<Res> =>
      pr.req("api.localhost", "GET", "/.well-known/agent-access", { from });
    // Two ranges with the same history: two requests, then half an hour later two more and one too many.
    for (const from of ["127.0.0.1", "127.0.2.1"])
      expect([(await get(from)).status, (await get(from)).status]).toEqual([200, 200]);
    pr.advance(30 * MIN);
    const refused: Res[] = [];
    for (const from of ["127.0.0.1", "127.0.2.1"]) {
      expect([(await get(from)).status, (await get(from)).status]).toEqual([200, 200]);
      refused.push(await get(from));
    }
    const [a, b] = refused as [Res, Res];
    expect(a.status).toBe(429);
    const r = retryAfter(a);
    expect(r).toBeGreaterThan(30 * 60); // was 60
    expect(r).toBeLessThanOrEqual((30 * MIN + SLICE) / 1000);
    expect(retryAfter(b)).toBe(r);
    expectBodySaysWait(a);
    expect(num(a.json(), "error.retry_after_seconds")).toBe(r);
    pr.advance(60_000);
    expect((await get("127.0.2.1")).status).toBe(429); // what the old header promised
    pr.advance(r * 1000 - 60_000);
    expect((await get("127.0.0.1")).status).toBe(200); // what the new one promises
  });

  it("§28 per sandbox and §23.2 per publication: Retry-After is from the sandbox's own window", async () => {
    const pr = (p = await startProvider({ requestsPerSandboxPerHour: 4, publishPerSandboxPerHour: 2 }));
    const a = await createSandbox(pr);
    const f = await pr.req("api.localhost", "POST", "/v1/faqs", { json: SAMPLE_FAQ, headers: a.auth });
    const url = `/v1/faqs/${str(f.json(), "faq_id")}/publish`;
    expect((await pr.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(200);
    expect((await pr.req("api.localhost", "POST", url, { headers: a.auth })).status).toBe(200);
    pr.advance(20 * MIN); // the refused hit counts too: room comes when the first three calls leave the window
    const pub = await pr.req("api.localhost", "POST", url, { headers: a.auth });
    expect(pub.status).toBe(429);
    expect(retryAfter(pub)).toBeGreaterThan(40 * 60);
    expect(retryAfter(pub)).toBeLessThanOrEqual((40 * MIN + SLICE) / 1000);
    expectBodySaysWait(pub);
    const over = await pr.req("api.localhost", "GET", "/v1/faqs", { headers: a.auth }); // the 5th call
    expect(over.status).toBe(429);
    expect(retryAfter(over)).toBeGreaterThan(40 * 60);
    expect(retryAfter(over)).toBeLessThanOrEqual((40 * MIN + SLICE) / 1000);
    expectBodySaysWait(over);
  });

  it("§11.2 the breaker's 503 says when it closes, in the header and the message", async () => {
    const pr = (p = await startProvider({ admission: { baseDifficulty: 2, breakerAt: 2, breakerCooldownMs: 90_000 } }));
    await createSandbox(pr);
    await createSandbox(pr);
    pr.advance(20_000);
    const r = await pr.req("api.localhost", "GET", "/v1/sandboxes/challenge");
    expect(r.status).toBe(503);
    expect(retryAfter(r)).toBe(70); // was 300 whatever the cooldown
    expect(str(r.json(), "error.message")).toBe("sandbox creation is paused, try again in 70 s");
    expect(num(r.json(), "error.retry_after_seconds")).toBe(70);
  });
});

describe("§19.5 the claim page's 429 says the real wait, and nothing about the code", () => {
  async function page(pr: Provider, from?: string): Promise<{ cookie: string; csrf: string }> {
    const res = await pr.req("admin.localhost", "GET", "/claim", from === undefined ? {} : { from });
    return { cookie: cookiesOf(res), csrf: /name="csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? "" };
  }
  const verify = (pr: Provider, s: { cookie: string; csrf: string }, code: string): Promise<Res> =>
    pr.req("admin.localhost", "POST", "/claim/verify", { json: { code, csrf: s.csrf }, headers: { cookie: s.cookie } });

  it("the range's claim limit: Retry-After from its window", async () => {
    const pr = (p = await startProvider({ claimPerIpPerHour: 3 }));
    const s = await page(pr);
    await verify(pr, s, "ACP-AAAA-AAAA-AAAA-AAA0");
    await verify(pr, s, "ACP-AAAA-AAAA-AAAA-AAA1");
    pr.advance(10 * MIN);
    await verify(pr, s, "ACP-AAAA-AAAA-AAAA-AAA2");
    const r = await verify(pr, s, "ACP-AAAA-AAAA-AAAA-AAA3");
    expect(r.status).toBe(429);
    // The refused press counts too: room comes when the first two presses have left the window (the old header: 60).
    expect(retryAfter(r)).toBeGreaterThan(50 * 60);
    expect(retryAfter(r)).toBeLessThanOrEqual((50 * MIN + SLICE) / 1000);
    expectBodySaysWait(r);
  });

  it("the range's lockout: Retry-After is the lockout's remaining time, the same for a real and an unknown code", async () => {
    const pr = (p = await startProvider({ claimPerIpPerHour: 1000, claimPerCodePerHour: 1000 }));
    const a = await createSandbox(pr);
    await publishFaq(pr, a);
    const c = await pr.req("api.localhost", "POST", `/v1/sandboxes/${a.id}/claim`, { headers: a.auth });
    const code = str(c.json(), "claim_code");
    const s = await page(pr);
    for (let i = 0; i < 6; i++) {
      const typed = `ACP-BBBB-BBBB-BBBB-BBB${i}`;
      const ch = await pr.req("admin.localhost", "POST", "/claim/challenge", {
        json: { code: typed, csrf: s.csrf },
        headers: { cookie: s.cookie },
      });
      const nonce = solve(str(ch.json(), "challenge"), num(ch.json(), "difficulty"));
      await pr.req("admin.localhost", "POST", "/claim/verify", {
        json: { code: typed, csrf: s.csrf, challenge: str(ch.json(), "challenge"), nonce },
        headers: { cookie: s.cookie },
      });
    }
    pr.advance(10_000);
    const locked = (await humanClaim(pr, code)).verify;
    expect(locked.status).toBe(429);
    expect(retryAfter(locked)).toBe(20); // the 30 s lockout, 10 s in
    expectBodySaysWait(locked);
    expect(num(locked.json(), "error.retry_after_seconds")).toBe(20);
    expect(shape(locked)).toEqual(shape((await humanClaim(pr, "ACP-CCCC-CCCC-CCCC-CCCC")).verify));
    pr.advance(20_000);
    expect((await humanClaim(pr, code)).verify.status).toBe(200);
  });

  it("a code's own limit: the longest its window can hold, whoever typed it and when (no oracle)", async () => {
    const pr = (p = await startProvider({ claimPerCodePerHour: 2, claimPerIpPerHour: 100 }));
    const s = await page(pr);
    const other = await page(pr, "127.0.3.1");
    const code = "ACP-DDDD-DDDD-DDDD-DDDD";
    // Another range typed it twice, long ago; this range types it now.
    await pr.req("admin.localhost", "POST", "/claim/verify", {
      json: { code, csrf: other.csrf },
      headers: { cookie: other.cookie },
      from: "127.0.3.1",
    });
    pr.advance(40 * MIN);
    await verify(pr, s, code);
    const late = await verify(pr, s, code);
    const fresh = "ACP-EEEE-EEEE-EEEE-EEEE";
    await verify(pr, s, fresh);
    await verify(pr, s, fresh);
    const now = await verify(pr, s, fresh);
    expect([late.status, now.status]).toEqual([429, 429]);
    expect(retryAfter(late)).toBe((HOUR + SLICE) / 1000);
    // The body says the same fixed bound, not the code's real history (the other range's hits 40 minutes ago).
    expectBodySaysWait(late);
    expect(num(late.json(), "error.retry_after_seconds")).toBe((HOUR + SLICE) / 1000);
    expect(shape(late)).toEqual(shape(now));
  });
});
