/**
 * The webhook channel as a receiver written from docs/guides/consent-channels.md alone would meet it: the
 * signature recomputed independently over the raw bytes, a receiver that answers slowly, never, or only after
 * it has already posted the decision, and callback clients that misbehave (too big, too slow).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import {
  createConsentBroker,
  createWebhookChannel,
  realTimers,
  signWebhookBody,
  type ConsentRequestV02,
  type WebhookChannel,
} from "../../src/consent/index.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";
import { listen, postCallback, type ReceivedPost } from "./webhook-servers.js";
import type { IncomingMessage, ServerResponse } from "node:http";

const SECRET = "whsec-from-the-docs";

/** The docs' recipe, written without the channel's own helpers: HMAC-SHA256(secret, "<timestamp>.<raw body>"). */
function docsSignature(secret: string, timestamp: string, rawBody: Buffer): string {
  return `sha256=${createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), rawBody]))
    .digest("hex")}`;
}

function docsVerify(headers: IncomingMessage["headers"], rawBody: Buffer, nowSeconds: number): boolean {
  const timestamp = headers["x-acp-timestamp"];
  const signature = headers["x-acp-signature"];
  if (typeof timestamp !== "string" || typeof signature !== "string") return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(docsSignature(SECRET, timestamp, rawBody));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

type Handler = (post: ReceivedPost & { raw: Buffer }, res: ServerResponse) => void;

/** A receiver whose answer to each POST the test decides (`handler`); raw bytes kept. */
async function receiver(handler: Handler) {
  const posts: (ReceivedPost & { raw: Buffer })[] = [];
  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const post = { headers: req.headers, body: raw.toString("utf8"), raw };
      posts.push(post);
      handler(post, res);
    });
  });
  return { ...server, posts };
}

async function setup(handler: Handler, extra: Partial<Parameters<typeof createWebhookChannel>[0]> = {}) {
  const time = new ManualTime();
  const hook = await receiver(handler);
  const holder: { channel?: WebhookChannel } = {};
  const callback = await listen((req, res) => void holder.channel?.handleCallback(req, res));
  const channel = createWebhookChannel({
    url: `${hook.url}/acp`,
    secret: SECRET,
    clock: time.clock,
    callbackUrl: `${callback.url}/cb`,
    initialBackoffMs: 1,
    timers: time,
    ...extra,
  });
  holder.channel = channel;
  const broker = createConsentBroker({
    channels: [channel],
    ...createTestProofs(),
    clock: time.clock,
    timers: time,
    random: countingRandom(),
    progressIntervalMs: 0,
  });
  const requests = (): ConsentRequestV02[] =>
    hook.posts.map((p) => JSON.parse(p.body) as ConsentRequestV02).filter((r) => r.type === "consent_request");
  const answer = (request: { id: string; nonce: string }, fields: Record<string, unknown>) =>
    postCallback(`${callback.url}/cb`, JSON.stringify({ request_id: request.id, nonce: request.nonce, ...fields }), {
      secret: SECRET,
      now: time.clock(),
    });
  const close = async () => {
    await hook.close();
    await callback.close();
  };
  return { time, hook, callback, channel, broker, requests, answer, close };
}

/** Advances the manual clock a step at a time until `probe` holds (the code under test arms its timers late). */
function advanceUntil<T>(time: ManualTime, stepMs: number, probe: () => T | undefined | null | false): Promise<T> {
  return eventually(() => {
    const value = probe();
    if (value === undefined || value === null || value === false) time.advance(stepMs);
    return value;
  });
}

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
          "X-ACP-Signature": docsSignature(SECRET, timestamp, body),
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

describe("what the proxy sends where", () => {
  it("does not follow a redirect with the signed request: a 3xx ends delivery", async () => {
    const elsewhere = await receiver((_post, res) => void res.writeHead(200).end());
    const s = await setup((_post, res) => void res.writeHead(307, { Location: `${elsewhere.url}/steal` }).end());
    try {
      const outcome = await s.broker.ask(makeAsk());
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect(outcome.reason).toMatch(/307/);
      expect(s.requests()).toHaveLength(1);
      expect(elsewhere.posts).toHaveLength(0);
    } finally {
      await s.close();
      await elsewhere.close();
    }
  });

  it("approved_with_modifications: the call goes on with the edits, nested secrets shown redacted kept as they were", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const args = {
        url: "https://api.example.test/v1/send",
        headers: { authorization: "Bearer sk-live-0123456789abcdef0123", "x-mode": "draft" },
        body: { to: "alice@example.test", amount: 10 },
      };
      const pending = s.broker.ask(makeAsk({ arguments: args }));
      const request = await eventually(() => s.requests()[0]);
      const shown = request.action.parameters as typeof args;
      expect(JSON.stringify(shown)).not.toContain("sk-live");
      // the receiver edits what it was shown: one nested field changed, the redacted header sent back as shown
      const modifications = { headers: { ...shown.headers, "x-mode": "send" }, body: { ...shown.body, amount: 5 } };
      expect(await s.answer(request, { decision: "approved_with_modifications", modifications })).toBe(200);
      const outcome = await pending;
      expect(outcome).toMatchObject({
        kind: "approved",
        arguments: {
          url: args.url,
          headers: { authorization: args.headers.authorization, "x-mode": "send" },
          body: { to: "alice@example.test", amount: 5 },
        },
      });
      if (outcome.kind === "approved") {
        expect((outcome.consentResponse as { decision?: unknown } | undefined)?.decision).toBe(
          "approved_with_modifications",
        );
        expect(JSON.stringify(outcome.consentResponse)).not.toContain("sk-live");
      }
    } finally {
      await s.close();
    }
  });

  it("a callback for one request cannot decide another: its nonce is refused, and its signature does not move", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const a = s.broker.ask(makeAsk());
      const b = s.broker.ask(makeAsk({ arguments: { path: "/etc/passwd", content: "x" } }));
      await eventually(() => s.requests().length === 2);
      const [ra, rb] = s.requests() as [ConsentRequestV02, ConsentRequestV02];
      const url = `${s.callback.url}/cb`;
      const now = s.time.clock();
      const timestamp = String(Math.floor(now.getTime() / 1000));
      // B's id with A's nonce, properly signed: the nonce binds the answer to A
      const crossed = JSON.stringify({ request_id: rb.id, nonce: ra.nonce, decision: "approved" });
      expect(await postCallback(url, crossed, { secret: SECRET, now })).toBe(409);
      // A's signed approval with the id changed to B's: the signature no longer matches
      const forA = JSON.stringify({ request_id: ra.id, nonce: ra.nonce, decision: "approved" });
      const signature = signWebhookBody(SECRET, timestamp, forA);
      const moved = forA.replace(ra.id, rb.id);
      expect(await postCallback(url, moved, { secret: SECRET, now, signature, timestamp })).toBe(401);
      expect(await s.answer(rb, { decision: "denied" })).toBe(200);
      expect(await s.answer(ra, { decision: "denied" })).toBe(200);
      expect((await a).kind).toBe("denied");
      expect((await b).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("refuses a signed callback that gives a key twice (read as its last value here, maybe its first by the signer)", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const a = s.broker.ask(makeAsk());
      await eventually(() => s.requests().length === 1);
      const [ra] = s.requests() as [ConsentRequestV02];
      const now = s.time.clock();
      const twice = `{"request_id":"${ra.id}","nonce":"${ra.nonce}","decision":"denied","decision":"approved"}`;
      expect(await postCallback(`${s.callback.url}/cb`, twice, { secret: SECRET, now })).toBe(400);
      // nothing was decided: the real answer still is
      expect(await s.answer(ra, { decision: "denied" })).toBe(200);
      expect((await a).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("hands a signed callback for a request it does not hold to `forward` (another proxy's), with its nonce", async () => {
    const calls: unknown[][] = [];
    let accept = true;
    const forward = (...args: unknown[]): boolean => {
      calls.push(args);
      return accept;
    };
    const s = await setup((_post, res) => void res.writeHead(200).end(), { forward });
    try {
      const id = `cr_${"b".repeat(32)}`;
      const url = `${s.callback.url}/cb`;
      const now = s.time.clock();
      const body = (fields: Record<string, unknown>) => JSON.stringify({ request_id: id, nonce: "n_other", ...fields });
      expect(await postCallback(url, body({ decision: "maybe" }), { secret: SECRET, now })).toBe(400);
      expect(await postCallback(url, body({ decision: "approved", scope: "session" }), { secret: SECRET, now })).toBe(
        200,
      );
      // the answer names the channel it came by: the proxy holding the request reads it through its `cli` channel
      expect(calls).toEqual([
        [id, { decision: "approved", scope: "session", approverId: "webhook", channel: "webhook" }, "n_other"],
      ]);
      accept = false;
      expect(await postCallback(url, body({ decision: "denied" }), { secret: SECRET, now })).toBe(404);
      // forged: never reaches forward
      expect(await postCallback(url, body({ decision: "approved", x: 1 }), { secret: "nope", now })).toBe(401);
      expect(calls).toHaveLength(2);
    } finally {
      await s.close();
    }
  });

  it("sends user:password in the URL as HTTP Basic authentication (fetch refuses a URL with credentials)", async () => {
    const hook = await receiver((_post, res) => void res.writeHead(200).end());
    try {
      const time = new ManualTime();
      const url = hook.url.replace("http://", "http://ops:p%40ss@");
      const channel = createWebhookChannel({ url: `${url}/acp`, secret: SECRET, clock: time.clock, timers: time });
      const controller = new AbortController();
      const request = makeRequestLike();
      const delivered = channel.deliver({ request, reasons: [], sessionId: "s", signal: controller.signal });
      const post = await eventually(() => hook.posts[0]);
      expect(post.headers.authorization).toBe(`Basic ${Buffer.from("ops:p@ss").toString("base64")}`);
      controller.abort("withdrawn");
      await delivered.catch(() => undefined);
    } finally {
      await hook.close();
    }
  });

  it("refuses an approver_id that is too long or not printable, and keeps waiting", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      expect(await s.answer(request, { decision: "denied", approver_id: "a".repeat(500) })).toBe(400);
      expect(await s.answer(request, { decision: "denied", approver_id: "ops\u001b[2K\rroot" })).toBe(400);
      expect(await s.answer(request, { decision: "denied", approver_id: 42 })).toBe(400);
      expect(await s.answer(request, { decision: "denied", approver_id: "ops@example.com" })).toBe(200);
      const outcome = await pending;
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect(outcome.reason).toContain("`ops@example.com` via webhook");
    } finally {
      await s.close();
    }
  });

  it("after a restart a callback for a request the old process held gets 404", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      void s.broker.ask(makeAsk({ timeoutMs: 1_000 }));
      const request = await eventually(() => s.requests()[0]);
      // the restarted proxy: a new channel with the same secret, nothing pending
      const restarted = createWebhookChannel({ url: `${s.hook.url}/acp`, secret: SECRET, clock: s.time.clock });
      const fresh = await listen((req, res) => void restarted.handleCallback(req, res));
      try {
        const body = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "approved" });
        expect(await postCallback(`${fresh.url}/cb`, body, { secret: SECRET, now: s.time.clock() })).toBe(404);
      } finally {
        await fresh.close();
      }
      s.time.advance(1_000);
    } finally {
      await s.close();
    }
  });
});

describe("the callback endpoint against misbehaving clients", () => {
  it("refuses a body announced over 64 KiB at once, without waiting for it", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const status = await rawRequest(
        s.callback.url,
        `POST /cb HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`,
      );
      expect(status).toBe(413);
    } finally {
      await s.close();
    }
  });

  it("survives clients that hang up mid-body (too large, slow) and keeps answering", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const { hostname, port } = new URL(s.callback.url);
      for (const length of [100_000, 50]) {
        await new Promise<void>((resolve) => {
          const socket = connect(Number(port), hostname, () => {
            socket.write(`POST /cb HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n{"a":`);
            setImmediate(() => {
              socket.destroy();
              resolve();
            });
          });
          socket.on("error", () => undefined);
        });
      }
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      expect(await s.answer(request, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("answers 408 to a client that stops sending its body", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const status = rawRequest(
        s.callback.url,
        `POST /cb HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"request_id":`,
      );
      const done = { status: undefined as number | undefined };
      void status.then((v) => (done.status = v));
      expect(await advanceUntil(s.time, 1_000, () => done.status)).toBe(408);
    } finally {
      await s.close();
    }
  });

  it("refuses a body that is not UTF-8 JSON with 400, even signed", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      const body = Buffer.concat([
        Buffer.from(`{"request_id":"${request.id}","nonce":"${request.nonce}","decision":"denied","reason":"`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`"}`),
      ]);
      const timestamp = String(Math.floor(s.time.clock().getTime() / 1000));
      const res = await fetch(`${s.callback.url}/cb`, {
        method: "POST",
        headers: { "X-ACP-Timestamp": timestamp, "X-ACP-Signature": docsSignature(SECRET, timestamp, body) },
        body,
      });
      expect(res.status).toBe(400);
      expect(await s.answer(request, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });
});

/** The value of a settled promise, or undefined while it is pending. */
const settled = new WeakMap<Promise<unknown>, { value: unknown }>();
function settledValue<T>(promise: Promise<T>): T | undefined {
  if (!settled.has(promise)) {
    settled.set(promise, { value: undefined });
    void promise.then((value) => ((settled.get(promise) as { value: unknown }).value = value));
  }
  return (settled.get(promise) as { value: T | undefined }).value;
}

/** Writes `head` on a raw socket and resolves with the HTTP status of the answer (the socket stays open). */
function rawRequest(baseUrl: string, head: string): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match !== null) {
        resolve(Number(match[1]));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
}

/** A consent request as the broker would build it (only what the channel reads). */
function makeRequestLike(): ConsentRequestV02 {
  return {
    type: "consent_request",
    version: "0.2.0",
    id: `cr_${"0".repeat(32)}`,
    timestamp: "2026-01-15T12:00:00.000Z",
    expires_at: "2026-01-15T12:02:00.000Z",
    agent: { id: "a", name: "agent", command: "agent" },
    action: { tool: "t", server: "s", category: "write", risk_level: "medium", parameters: {}, description: "" },
    policy: { rule_id: "r", rule_name: "r", required_level: "ask" },
    nonce: "n_00000000-0000-4000-8000-000000000000",
  };
}
