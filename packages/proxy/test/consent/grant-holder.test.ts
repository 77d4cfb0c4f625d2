/**
 * An approval beyond one call (for this session, for a while) covers only the agent it was given to: another
 * agent making the same call is asked, a call naming no agent matches only approvals given to none, and a
 * reused approval is audited as the call being decided (the approved request named apart).
 */
import { describe, expect, it } from "vitest";
import { createConsentGrantStore, openStateDb } from "@acp/store";
import {
  createConsentBroker,
  type ChannelDelivery,
  type ConsentChannel,
  type HumanAnswer,
} from "../../src/consent/index.js";
import { grantKey } from "../../src/consent/grants.js";
import type { ConsentAsk } from "../../src/gate/types.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";

function scripted() {
  const deliveries: ChannelDelivery[] = [];
  const answers: ((a: HumanAnswer) => void)[] = [];
  const channel: ConsentChannel = {
    name: "cli",
    isAvailable: () => true,
    deliver: (delivery) =>
      new Promise<HumanAnswer>((resolve, reject) => {
        deliveries.push(delivery);
        answers.push(resolve);
        delivery.signal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
  };
  return { channel, deliveries, answers };
}

/** Brokers sharing one grant store (the nodes of `acp serve`, or the proxies of one home). */
function home(shareSessionGrants = false) {
  const grants = createConsentGrantStore(openStateDb(":memory:"));
  const proofs = createTestProofs();
  const time = new ManualTime();
  return () => {
    const channel = scripted();
    const events: { type: string; fields: Record<string, unknown> }[] = [];
    const handle = createConsentBroker({
      channels: [channel.channel],
      sign: proofs.sign,
      verify: proofs.verify,
      grants,
      verifyGrant: proofs.verify,
      shareSessionGrants,
      clock: time.clock,
      timers: time,
      random: countingRandom(),
      progressIntervalMs: 0,
      audit: { record: (type, fields) => void events.push({ type, fields }) },
    });
    return { handle, channel, events };
  };
}

const UNTIL = "2026-01-15T12:10:00.000Z";

/** Asks, and denies the request a person is asked; false when nobody was asked (an approval was reused). */
async function askedAndDenied(b: ReturnType<ReturnType<typeof home>>, ask = makeAsk()): Promise<boolean> {
  const before = b.channel.deliveries.length;
  const outcome = b.handle.ask(ask);
  let settled = false;
  void outcome.then(() => (settled = true));
  await eventually(() => settled || b.channel.deliveries.length > before);
  const asked = b.channel.deliveries.length > before;
  if (asked) b.channel.answers[before]?.({ decision: "denied", approverId: "cli:alice" });
  const result = await outcome;
  expect(result.kind).toBe(asked ? "denied" : "approved");
  return asked;
}

/** An ask that names no agent (a call whose client gave none). */
function withoutAgent(ask: ConsentAsk): ConsentAsk {
  return Object.fromEntries(Object.entries(ask).filter(([key]) => key !== "agent")) as unknown as ConsentAsk;
}

describe("an approval of wider scope and the agent it was given to", () => {
  it("the grant key names the agent; a call naming none keeps the key it always had", () => {
    const args = { to: "x@example.com" };
    const none = grantKey("mail", "send_email", args);
    expect(grantKey("mail", "send_email", args, { sessionId: "s" })).toBe(none);
    const alice = grantKey("mail", "send_email", args, { agent: "alice_bot", sessionId: "s" });
    expect(alice).not.toBe(none);
    expect(grantKey("mail", "send_email", args, { agent: "evil_bot", sessionId: "s" })).not.toBe(alice);
    // the agent's own session namespace (`alice_bot/…`: a token's) is not the body's claim of the name
    expect(grantKey("mail", "send_email", args, { agent: "alice_bot", sessionId: "alice_bot/s" })).not.toBe(alice);
  });

  it("a window approval is not reused for another agent, nor for a call naming no agent (in memory and stored)", async () => {
    const broker = home();
    const first = broker();
    const approved = first.handle.ask(makeAsk({ agent: "alice_bot", sessionId: "alice_bot/s1" }));
    await eventually(() => first.channel.deliveries[0]);
    first.channel.answers[0]?.({ decision: "approved", scope: { until: UNTIL }, approverId: "cli:alice" });
    expect(await approved).toMatchObject({ kind: "approved", scope: { until: UNTIL } });

    // the same broker (its memory) and another one (the stored grant)
    for (const b of [first, broker()]) {
      expect(await askedAndDenied(b, makeAsk({ agent: "evil_bot", sessionId: "evil_bot/zzz" }))).toBe(true);
      expect(await askedAndDenied(b, withoutAgent(makeAsk({ sessionId: "zzz" })))).toBe(true);
      // a body claiming the name, outside the token's namespace
      expect(await askedAndDenied(b, makeAsk({ agent: "alice_bot", sessionId: "zzz" }))).toBe(true);
      // the agent it was given to, in another session of its own: reused
      expect(await askedAndDenied(b, makeAsk({ agent: "alice_bot", sessionId: "alice_bot/s2" }))).toBe(false);
    }
  });

  it("a session approval (shared between nodes) is not reused for another agent naming the same session", async () => {
    const broker = home(true);
    const first = broker();
    const approved = first.handle.ask(makeAsk({ agent: "alice_bot", sessionId: "s1" }));
    await eventually(() => first.channel.deliveries[0]);
    first.channel.answers[0]?.({ decision: "approved", scope: "session", approverId: "cli:alice" });
    expect((await approved).kind).toBe("approved");
    for (const b of [first, broker()]) {
      expect(await askedAndDenied(b, makeAsk({ agent: "mallory", sessionId: "s1" }))).toBe(true);
      expect(await askedAndDenied(b, makeAsk({ agent: "alice_bot", sessionId: "s1" }))).toBe(false);
    }
  });

  it("a reused approval is audited as the call being decided, the approved request named apart", async () => {
    const broker = home();
    const first = broker();
    const approved = first.handle.ask(makeAsk({ agent: "alice_bot", sessionId: "alice_bot/s1" }));
    const delivery = await eventually(() => first.channel.deliveries[0]);
    first.channel.answers[0]?.({ decision: "approved", scope: { until: UNTIL }, approverId: "cli:alice" });
    expect((await approved).kind).toBe("approved");
    const second = broker();
    expect(await askedAndDenied(second, makeAsk({ agent: "alice_bot", sessionId: "alice_bot/s9" }))).toBe(false);
    const event = second.events.find((e) => e.type === "consent_approved");
    expect(event?.fields).toMatchObject({ agent: "alice_bot", session_id: "alice_bot/s9" });
    expect(event?.fields["metadata"]).toMatchObject({
      reused: true,
      approved_request_id: delivery.request.id,
      approved_agent: "alice_bot",
    });
  });
});
