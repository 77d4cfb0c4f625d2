/**
 * The webhook channel signs both directions with one shared secret: the direction is part of the signed
 * material, so what the proxy signed for the receiver is not a valid callback, and a callback is not a
 * valid delivery.
 */
import { describe, expect, it } from "vitest";
import {
  checkWebhookSignature,
  signWebhookBody,
  webhookHeaders,
  type ConsentRequestV02,
} from "../../src/consent/index.js";
import { eventually, makeAsk } from "./fixtures.js";
import { postCallback } from "./webhook-servers.js";
import { SECRET, docsVerify, setup } from "./webhook-receiver-fixture.js";

describe("webhook signatures name their direction", () => {
  const now = new Date("2026-01-15T12:00:00.000Z");
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const body = '{"request_id":"cr_x","nonce":"n_x","decision":"approved"}';

  it("a signature made for one direction is a bad_signature in the other", () => {
    const delivery = { timestamp, signature: signWebhookBody(SECRET, "delivery", timestamp, body) };
    const callback = { timestamp, signature: signWebhookBody(SECRET, "callback", timestamp, body) };
    expect(delivery.signature).not.toBe(callback.signature);
    expect(checkWebhookSignature(SECRET, "delivery", delivery, body, now, 300_000)).toBeNull();
    expect(checkWebhookSignature(SECRET, "callback", callback, body, now, 300_000)).toBeNull();
    expect(checkWebhookSignature(SECRET, "callback", delivery, body, now, 300_000)).toBe("bad_signature");
    expect(checkWebhookSignature(SECRET, "delivery", callback, body, now, 300_000)).toBe("bad_signature");
  });

  it("the callback endpoint refuses a body signed as the proxy signs its deliveries (401), and the request still waits", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const pending = s.broker.ask(makeAsk());
      const request = await eventually(() => s.requests()[0]);
      const answer = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "approved" });
      // exactly the headers the proxy puts on what it sends the receiver, over the callback's bytes
      const headers = webhookHeaders(SECRET, answer, s.time.clock());
      const status = await postCallback(`${s.callback.url}/cb`, answer, {
        secret: SECRET,
        now: s.time.clock(),
        timestamp: headers["X-ACP-Timestamp"] as string,
        signature: headers["X-ACP-Signature"] as string,
      });
      expect(status).toBe(401);
      // nothing was decided: a callback signed as a callback then answers it
      expect(await s.answer(request, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });

  it("a consent request the proxy delivered, posted back as it came to the callback endpoint, is refused 401", async () => {
    const s = await setup((_post, res) => void res.writeHead(200).end());
    try {
      const pending = s.broker.ask(makeAsk());
      await eventually(() => s.requests()[0]);
      const [post] = s.hook.posts;
      if (post === undefined) throw new Error("no delivery");
      // the receiver's recipe takes it as a delivery
      expect(docsVerify(post.headers, post.raw, Math.floor(s.time.clock().getTime() / 1000))).toBe(true);
      const status = await postCallback(`${s.callback.url}/cb`, post.raw.toString("utf8"), {
        secret: SECRET,
        now: s.time.clock(),
        timestamp: post.headers["x-acp-timestamp"] as string,
        signature: post.headers["x-acp-signature"] as string,
      });
      expect(status).toBe(401);
      const request = s.requests()[0] as ConsentRequestV02;
      expect(await s.answer(request, { decision: "denied" })).toBe(200);
      expect((await pending).kind).toBe("denied");
    } finally {
      await s.close();
    }
  });
});
