/**
 * What the webhook channel sends where (redirects, edits, nonces, forwarding, credentials in the URL, restarts)
 * and its callback endpoint against clients that misbehave (too big, too slow, not UTF-8 JSON).
 */
import { describe, expect, it } from "vitest";
import { connect } from "node:net";
import { createWebhookChannel, signWebhookBody, type ConsentRequestV02 } from "../../src/consent/index.js";
import { ManualTime, eventually, makeAsk } from "./fixtures.js";
import { listen, postCallback } from "./webhook-servers.js";
import {
  SECRET,
  advanceUntil,
  docsSignature,
  makeRequestLike,
  rawRequest,
  receiver,
  setup,
} from "./webhook-receiver-fixture.js";

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
      const signature = signWebhookBody(SECRET, "callback", timestamp, forA);
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

  it("refuses a signed callback whose reason holds a hidden character (it is signed and told to the agent)", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const a = s.broker.ask(makeAsk());
      await eventually(() => s.requests().length === 1);
      const [ra] = s.requests() as [ConsentRequestV02];
      for (const reason of [
        "wrong\u001b[2K\rapproved",
        "wrong\u009b2K",
        "wrong\u200brecipient",
        "wrong \u202etneipicer",
      ]) {
        expect(await s.answer(ra, { decision: "denied", reason })).toBe(400);
      }
      // nothing was decided: a printable reason still is, and reaches the agent
      expect(await s.answer(ra, { decision: "denied", reason: "wrong recipient" })).toBe(200);
      expect(await a).toMatchObject({ kind: "denied", reason: expect.stringContaining("wrong recipient") as unknown });
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
        headers: {
          "X-ACP-Timestamp": timestamp,
          "X-ACP-Signature": docsSignature(SECRET, "acp-callback", timestamp, body),
        },
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
