/**
 * The webhook channel as a receiver written from docs/guides/consent-channels.md alone would meet it: the
 * signature recomputed independently over the raw bytes, and a receiver that answers slowly, never, or only
 * after it has already posted the decision (the consent request and the consent_settled notice).
 */
import { describe, expect, it } from "vitest";
import { createWebhookChannel, realTimers, type ConsentRequestV02 } from "../../src/consent/index.js";
import { ManualTime, eventually, makeAsk } from "./fixtures.js";
import type { ServerResponse } from "node:http";
import { listen, type ReceivedPost } from "./webhook-servers.js";
import {
  SECRET,
  advanceUntil,
  docsSignature,
  docsVerify,
  makeRequestLike,
  settledValue,
  setup,
} from "./webhook-receiver-fixture.js";

describe("a webhook receiver written from the docs", () => {
  it("checks the signature over the raw bytes it received, non-ASCII arguments included, and answers the same way", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const args = { path: "/tmp/é✓.txt", content: "naïve — 日本語 😀 \u2028 \u0000" };
      const pending = s.broker.ask(makeAsk({ arguments: args }));
      const post = await eventually(() => s.hook.posts[0]);
      const nowSeconds = Math.floor(s.time.clock().getTime() / 1000);
      expect(docsVerify(post.headers, post.raw, nowSeconds)).toBe(true);
      expect(post.headers["content-type"]).toMatch(/^application\/json/);
      const request = JSON.parse(post.raw.toString("utf8")) as ConsentRequestV02;
      expect(request.action.parameters).toEqual(args);
      // the answer, signed over its raw UTF-8 bytes with the recipe
      const body = Buffer.from(
        JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "denied", reason: "pas ça — ✗" }),
      );
      const timestamp = String(nowSeconds);
      const res = await fetch(`${s.callback.url}/cb`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-ACP-Timestamp": timestamp,
          "X-ACP-Signature": docsSignature(SECRET, "acp-callback", timestamp, body),
        },
        body,
      });
      expect(res.status).toBe(200);
      const outcome = await pending;
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect(outcome.reason).toContain("pas ça — ✗");
    } finally {
      await s.close();
    }
  });

  it("takes a decision posted while the request's POST is still open (a receiver that answers 500 afterwards)", async () => {
    const s = await setup((post, res) => {
      const request = JSON.parse(post.body) as ConsentRequestV02;
      if (request.type !== "consent_request") return void res.writeHead(200).end();
      // a synchronous receiver: ask the person, post the decision, and only then answer (badly)
      void s.answer(request, { decision: "approved", approver_id: "ops" }).then(() => res.writeHead(500).end());
    });
    try {
      const outcome = await s.broker.ask(makeAsk());
      expect(outcome.kind).toBe("approved");
      // the decision is in: the request is not posted again
      expect(s.requests()).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it("waits as long as a 429's or 503's Retry-After asks (at most a minute) before trying again", async () => {
    const answers: [number, Record<string, string>][] = [
      [429, { "Retry-After": "30" }],
      [503, { "Retry-After": "3600" }],
      [503, {}],
    ];
    const s = await setup((post, res) => {
      const [status, headers] = post.body.includes('"consent_request"') ? (answers.shift() ?? [200, {}]) : [200, {}];
      res.writeHead(status, headers).end();
    });
    try {
      const pending = s.broker.ask(makeAsk({ timeoutMs: 600_000 }));
      await eventually(() => s.requests().length === 1);
      s.time.advance(29_000);
      await new Promise((r) => setTimeout(r, 50));
      expect(s.requests()).toHaveLength(1);
      await advanceUntil(s.time, 1_000, () => s.requests().length === 2);
      s.time.advance(59_000);
      await new Promise((r) => setTimeout(r, 50));
      expect(s.requests()).toHaveLength(2);
      await advanceUntil(s.time, 1_000, () => s.requests().length === 3);
      // no Retry-After: the backoff (1 ms here, doubled)
      const fourth = await advanceUntil(s.time, 1, () => s.requests()[3]);
      expect(await s.answer(fourth, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("retries a receiver that is down (connection refused) with backoff, then fails the delivery", async () => {
    const down = await listen(() => undefined);
    const url = `${down.url}/acp`;
    await down.close();
    const delays: number[] = [];
    const timers = {
      setTimeout: (cb: () => void, ms: number) => {
        if (ms >= 10_000) return realTimers.setTimeout(cb, ms);
        delays.push(ms);
        return realTimers.setTimeout(cb, 0);
      },
      clearTimeout: (h: unknown) => realTimers.clearTimeout(h),
    };
    const time = new ManualTime();
    const channel = createWebhookChannel({ url, secret: SECRET, clock: time.clock, timers });
    const failure = await channel
      .deliver({ request: makeRequestLike(), reasons: [], sessionId: "s", signal: new AbortController().signal })
      .then(
        () => "answered",
        (e: unknown) => String(e),
      );
    expect(failure).toMatch(/failed after 5 attempts/);
    expect(delays).toEqual([500, 1_000, 2_000, 4_000]);
  });

  it("gives up on an attempt the receiver never answers and retries it", async () => {
    const held: ServerResponse[] = [];
    const s = await setup((post, res) => {
      if (held.length === 0 && post.body.includes('"consent_request"')) return void held.push(res);
      res.writeHead(200).end();
    });
    try {
      const pending = s.broker.ask(makeAsk());
      await eventually(() => s.requests().length === 1);
      const second = await advanceUntil(s.time, 1_000, () => s.requests()[1]);
      expect(second.id).toBe(s.requests()[0]?.id);
      expect(await s.answer(second, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("does not hold the agent's call on a receiver that never answers the consent_settled POST", async () => {
    const s = await setup((post, res) => {
      if (post.body.includes('"consent_settled"')) return; // never answered
      res.writeHead(200).end();
    });
    try {
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      expect(await s.answer(request, { decision: "approved" })).toBe(200);
      await eventually(() => s.hook.posts.find((p) => p.body.includes('"consent_settled"')));
      const outcome = await advanceUntil(s.time, 1_000, () => settledValue(pending));
      expect(outcome.kind).toBe("approved");
    } finally {
      await s.close();
    }
  });
});

describe("the consent_settled notice", () => {
  const settledPosts = (s: { hook: { posts: (ReceivedPost & { raw: Buffer })[] } }) =>
    s.hook.posts.filter((p) => p.body.includes('"consent_settled"'));

  it("reaches a receiver that was briefly down: retried in the background, the agent's call not held by it", async () => {
    let refused = 0;
    const s = await setup((post, res) => {
      if (post.body.includes('"consent_settled"') && refused < 2) {
        refused++;
        return void res.writeHead(503).end();
      }
      res.writeHead(200).end();
    });
    try {
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      expect(await s.answer(request, { decision: "approved" })).toBe(200);
      // the call ends once the first notice failed, without waiting for the retries
      const outcome = await advanceUntil(s.time, 1, () => settledValue(pending));
      expect(outcome.kind).toBe("approved");
      await advanceUntil(s.time, 5, () => settledPosts(s).length >= 3);
      const bodies = settledPosts(s).map((p) => JSON.parse(p.body) as { request_id: string; outcome: unknown });
      expect(bodies.every((b) => b.request_id === request.id)).toBe(true);
      expect(new Set(bodies.map((b) => JSON.stringify(b.outcome))).size).toBe(1);
      // each retry is signed afresh and verifies as the docs say
      for (const p of settledPosts(s))
        expect(docsVerify(p.headers, p.raw, Math.floor(s.time.clock().getTime() / 1000))).toBe(true);
      // answered 200 the third time: nothing more is sent
      s.time.advance(60_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settledPosts(s)).toHaveLength(3);
    } finally {
      await s.close();
    }
  });

  it("is not retried after a final refusal (4xx), and close() stops the retries of a receiver that stays down", async () => {
    const gone = await setup((post, res) => {
      if (post.body.includes('"consent_settled"')) return void res.writeHead(404).end();
      res.writeHead(200).end();
    });
    try {
      const pending = gone.broker.ask(makeAsk());
      const request = await eventually(() => gone.requests()[0]);
      expect(await gone.answer(request, { decision: "denied" })).toBe(200);
      await advanceUntil(gone.time, 1, () => settledValue(pending));
      gone.time.advance(60_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settledPosts(gone)).toHaveLength(1);
    } finally {
      await gone.close();
    }

    const down = await setup((post, res) => {
      if (post.body.includes('"consent_settled"')) return void res.writeHead(503).end();
      res.writeHead(200).end();
    });
    try {
      const pending = down.broker.ask(makeAsk());
      const request = await eventually(() => down.requests()[0]);
      expect(await down.answer(request, { decision: "denied" })).toBe(200);
      await advanceUntil(down.time, 1, () => settledValue(pending));
      await down.channel.close?.();
      const sent = settledPosts(down).length;
      down.time.advance(600_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settledPosts(down)).toHaveLength(sent);
      expect(sent).toBeLessThanOrEqual(2);
    } finally {
      await down.close();
    }
  });
});
