import { describe, expect, it } from "vitest";
import {
  checkWebhookSignature,
  createWebhookChannel,
  realTimers,
  type ConsentRequestV02,
  type ConsentTimers,
  type WebhookChannel,
} from "../../src/consent/index.js";
import { runChannelCase, type ChannelHarness } from "./channel.case.js";
import { ManualTime, eventually, makeAsk, refuseEditsUnderEtc, manualBroker } from "./fixtures.js";
import { recordDeliveries } from "./recording.js";
import { listen, postCallback, startReceiver } from "./webhook-servers.js";

const SECRET = "whsec-test-secret";

async function startWebhook(time: ManualTime, statuses: number[] = [], timers: ConsentTimers = realTimers) {
  const receiver = await startReceiver(statuses);
  const holder: { channel?: WebhookChannel } = {};
  const callback = await listen((req, res) => void holder.channel?.handleCallback(req, res));
  const channel = createWebhookChannel({
    url: `${receiver.url}/acp`,
    secret: SECRET,
    clock: time.clock,
    callbackUrl: `${callback.url}/callback`,
    initialBackoffMs: 1,
    timers,
  });
  holder.channel = channel;
  const requests = (): ConsentRequestV02[] =>
    receiver.posts.map((p) => JSON.parse(p.body) as ConsentRequestV02).filter((r) => r.type === "consent_request");
  const answer = (request: { id: string; nonce: string }, fields: Record<string, unknown>) =>
    postCallback(
      `${callback.url}/callback`,
      JSON.stringify({ request_id: request.id, nonce: request.nonce, ...fields }),
      {
        secret: SECRET,
        now: time.clock(),
      },
    );
  const close = async () => {
    await receiver.close();
    await callback.close();
  };
  return { receiver, callback, channel, requests, answer, close };
}

async function webhookHarness(time: ManualTime): Promise<ChannelHarness> {
  const hook = await startWebhook(time);
  const { channel, requests } = recordDeliveries(hook.channel);
  const expectOk = async (status: Promise<number>) => expect(await status).toBe(200);
  return {
    channel,
    deliveries: () => requests.length,
    shown: async (index) => {
      const request = await eventually(() => hook.requests()[index]);
      const post = hook.receiver.posts.find((p) => p.body.includes(request.id));
      return { id: request.id, nonce: request.nonce, text: post?.body ?? "" };
    },
    approve: (shown, scope = "once") =>
      expectOk(hook.answer(shown, { decision: "approved", scope, approver_id: "ops" })),
    approveWithModifications: (shown, modifications) =>
      expectOk(hook.answer(shown, { decision: "approved_with_modifications", modifications })),
    deny: (shown) => expectOk(hook.answer(shown, { decision: "denied", reason: "no" })),
    forge: async (shown) => {
      const body = JSON.stringify({ request_id: shown.id, nonce: shown.nonce, decision: "approved" });
      const url = `${hook.callback.url}/callback`;
      expect(await postCallback(url, body, { secret: "wrong-secret", now: time.clock() })).toBe(401);
      const foreignNonce = JSON.stringify({ request_id: shown.id, nonce: "n_other", decision: "approved" });
      expect(await postCallback(url, foreignNonce, { secret: SECRET, now: time.clock() })).toBe(409);
    },
    settledAs: async (shown) => {
      const post = await eventually(() =>
        hook.receiver.posts.find((p) => p.body.includes('"consent_settled"') && p.body.includes(shown.id)),
      );
      return (JSON.parse(post.body) as { outcome: string }).outcome;
    },
    close: hook.close,
  };
}

runChannelCase("webhook", webhookHarness, { canModify: true, editRefusedAs: /^edit_refused$/ });

describe("webhook channel specifics", () => {
  it("signs the POST with an HMAC of `<timestamp>.<body>` the receiver can check", async () => {
    const time = new ManualTime();
    const hook = await startWebhook(time);
    try {
      const broker = manualBroker([hook.channel], time);
      const pending = broker.ask(makeAsk());
      const [post] = await eventually(() => (hook.receiver.posts.length > 0 ? hook.receiver.posts : null));
      const headers = { timestamp: post?.headers["x-acp-timestamp"], signature: post?.headers["x-acp-signature"] };
      expect(checkWebhookSignature(SECRET, "delivery", headers, post?.body ?? "", time.clock(), 300_000)).toBeNull();
      expect(checkWebhookSignature("other", "delivery", headers, post?.body ?? "", time.clock(), 300_000)).toBe(
        "bad_signature",
      );
      expect(post?.headers["x-acp-callback-url"]).toMatch(/\/callback$/);
      const request = hook.requests()[0] as ConsentRequestV02;
      await hook.answer(request, { decision: "denied" });
      expect((await pending).kind).toBe("denied");
    } finally {
      await hook.close();
    }
  });

  it("refuses stale, replayed, unknown and malformed callbacks", async () => {
    const time = new ManualTime();
    const hook = await startWebhook(time);
    try {
      const broker = manualBroker([hook.channel], time);
      const pending = broker.ask(makeAsk());
      const request = await eventually(() => hook.requests()[0]);
      const url = `${hook.callback.url}/callback`;
      const body = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "approved" });
      const stale = new Date(time.clock().getTime() - 6 * 60_000);
      expect(await postCallback(url, body, { secret: SECRET, now: stale })).toBe(401);
      expect(await postCallback(url, body, { secret: SECRET, now: time.clock(), signature: "sha256=zz" })).toBe(401);
      const unknown = JSON.stringify({
        request_id: `cr_${"1".repeat(32)}`,
        nonce: request.nonce,
        decision: "approved",
      });
      expect(await postCallback(url, unknown, { secret: SECRET, now: time.clock() })).toBe(404);
      const bad = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "maybe" });
      expect(await postCallback(url, bad, { secret: SECRET, now: time.clock() })).toBe(400);
      const deny = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "denied" });
      const timestamp = String(Math.floor(time.clock().getTime() / 1000));
      expect(await postCallback(url, deny, { secret: SECRET, now: time.clock(), timestamp })).toBe(200);
      expect(await postCallback(url, deny, { secret: SECRET, now: time.clock(), timestamp })).toBe(409);
      expect((await pending).kind).toBe("denied");
      const get = await fetch(url);
      expect(get.status).toBe(405);
      const huge = await postCallback(url, "x".repeat(70_000), { secret: SECRET, now: time.clock() });
      expect(huge).toBe(413);
    } finally {
      await hook.close();
    }
  });

  it("refuses a replayed callback up to the last instant its timestamp passes, not only until then", async () => {
    const time = new ManualTime();
    const hook = await startWebhook(time);
    try {
      const broker = manualBroker([hook.channel], time);
      const pending = broker.ask(makeAsk());
      const request = await eventually(() => hook.requests()[0]);
      const url = `${hook.callback.url}/callback`;
      const deny = JSON.stringify({ request_id: request.id, nonce: request.nonce, decision: "denied" });
      // signed five minutes ahead (the most the window takes), replayed when it is five minutes old
      const timestamp = String(Math.floor(time.clock().getTime() / 1000) + 300);
      expect(await postCallback(url, deny, { secret: SECRET, now: time.clock(), timestamp })).toBe(200);
      expect((await pending).kind).toBe("denied");
      time.advance(600_000);
      expect(await postCallback(url, deny, { secret: SECRET, now: time.clock(), timestamp })).toBe(409);
      time.advance(1_000);
      expect(await postCallback(url, deny, { secret: SECRET, now: time.clock(), timestamp })).toBe(401);
    } finally {
      await hook.close();
    }
  });

  it("retries a failing receiver with exponential backoff, then delivers", async () => {
    const time = new ManualTime();
    const delays: number[] = [];
    const timers: ConsentTimers = {
      setTimeout: (cb, ms) => {
        // the per-attempt timeouts (10 s) run for real; the backoff delays are recorded and skipped
        if (ms >= 10_000) return realTimers.setTimeout(cb, ms);
        delays.push(ms);
        return realTimers.setTimeout(cb, 0);
      },
      clearTimeout: (h) => realTimers.clearTimeout(h),
    };
    const hook = await startWebhook(time, [503, 500, 200], timers);
    try {
      const broker = manualBroker([hook.channel], time);
      const pending = broker.ask(makeAsk());
      const request = await eventually(() => (hook.receiver.posts.length === 3 ? hook.requests()[2] : null));
      expect(delays).toEqual([1, 2]);
      expect(new Set(hook.receiver.posts.map((p) => p.body)).size).toBe(1);
      await hook.answer(request, { decision: "approved", scope: { for: "10m" } });
      expect(await pending).toMatchObject({ kind: "approved", scope: { until: "2026-01-15T12:10:00.000Z" } });
    } finally {
      await hook.close();
    }
  });

  it("gives up on a receiver that refuses (4xx) and denies rather than hang", async () => {
    const time = new ManualTime();
    const hook = await startWebhook(time, [403]);
    try {
      const broker = manualBroker([hook.channel], time);
      const outcome = await broker.ask(makeAsk());
      expect(outcome.kind).toBe("denied");
      if (outcome.kind === "denied") expect(outcome.reason).toContain("403");
      expect(hook.receiver.posts.filter((p) => p.body.includes("consent_request"))).toHaveLength(1);
    } finally {
      await hook.close();
    }
  });

  it("tells the receiver why an approval with edits was not run (`consent_settled` with `reason`), signed", async () => {
    const time = new ManualTime();
    const hook = await startWebhook(time);
    try {
      const broker = manualBroker([hook.channel], time);
      const pending = broker.ask(makeAsk({ judgeEdited: refuseEditsUnderEtc() }));
      const request = await eventually(() => hook.requests()[0]);
      await hook.answer(request, { decision: "approved_with_modifications", modifications: { path: "/etc/hosts" } });
      expect((await pending).kind).toBe("approved");
      const post = await eventually(() => hook.receiver.posts.find((p) => p.body.includes('"consent_settled"')));
      expect(JSON.parse(post.body)).toEqual({
        type: "consent_settled",
        request_id: request.id,
        outcome: "edit_refused",
        reason:
          "refused by policy rule `no-etc`: rule `no-etc` matched: deny (path /etc/hosts, with Bearer [redacted])",
      });
      const headers = { timestamp: post.headers["x-acp-timestamp"], signature: post.headers["x-acp-signature"] };
      expect(checkWebhookSignature(SECRET, "delivery", headers, post.body, time.clock(), 300_000)).toBeNull();
    } finally {
      await hook.close();
    }
  });
});
