import { describe, expect, it } from "vitest";
import { createConsentGrantStore, openStateDb, type ConsentGrantStore } from "@acp/store";
import {
  createConsentBroker,
  type ChannelDelivery,
  type ConsentChannel,
  type ConsentResponseV02,
  type HumanAnswer,
} from "../../src/consent/index.js";
import { ManualTime, countingRandom, createTestProofs, eventually, makeAsk } from "./fixtures.js";

/** A channel the test answers by hand. */
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

/** Two proxies of one home: one key, one state.db, one clock; each broker its own process's memory. */
function home() {
  const db = openStateDb(":memory:");
  const grants = createConsentGrantStore(db);
  const proofs = createTestProofs();
  const time = new ManualTime();
  const broker = (store: ConsentGrantStore = grants) => {
    const channel = scripted();
    const events: { type: string; fields: Record<string, unknown> }[] = [];
    const handle = createConsentBroker({
      channels: [channel.channel],
      sign: proofs.sign,
      verify: proofs.verify,
      grants: store,
      verifyGrant: proofs.verify,
      clock: time.clock,
      timers: time,
      random: countingRandom(),
      progressIntervalMs: 0,
      audit: { record: (type, fields) => void events.push({ type, fields }) },
    });
    return { handle, channel, events };
  };
  return { db, grants, time, broker };
}

const TEN_MINUTES = "2026-01-15T12:10:00.000Z";

describe("time-window approvals (--for) across the proxies of one home", () => {
  it("a window approved through one proxy covers the same call in a proxy started later, until it ends", async () => {
    const h = home();
    const first = h.broker();
    const asked = first.handle.ask(makeAsk());
    await eventually(() => first.channel.deliveries[0]);
    first.channel.answers[0]?.({ decision: "approved", scope: { until: TEN_MINUTES }, approverId: "cli:alice" });
    expect(await asked).toMatchObject({ kind: "approved", scope: { until: TEN_MINUTES } });

    // a new proxy (a restarted stdio client): nobody is asked, the stored approval is reused and audited
    const second = h.broker();
    const reused = await second.handle.ask(makeAsk({ sessionId: "another-session" }));
    expect(reused).toMatchObject({ kind: "approved", scope: { until: TEN_MINUTES } });
    expect(second.channel.deliveries).toHaveLength(0);
    const event = second.events.find((e) => e.type === "consent_approved");
    const metadata = event?.fields["metadata"] as Record<string, unknown>;
    expect(metadata).toMatchObject({ reused: true });
    expect((metadata["consent_response"] as ConsentResponseV02).conditions.scope).toBe("window");

    // other arguments are another call: asked
    const other = second.handle.ask(makeAsk({ arguments: { path: "/etc/passwd", content: "x" } }));
    await eventually(() => second.channel.deliveries[0]);
    second.channel.answers[0]?.({ decision: "denied", approverId: "cli:alice" });
    expect((await other).kind).toBe("denied");

    // after the window a third proxy asks again
    h.time.advance(10 * 60_000);
    const third = h.broker();
    const late = third.handle.ask(makeAsk());
    await eventually(() => third.channel.deliveries[0]);
    third.channel.answers[0]?.({ decision: "denied", approverId: "cli:alice" });
    expect((await late).kind).toBe("denied");
  });

  it("a session approval is not shared, and a stored row that was changed or not signed by the home approves nothing", async () => {
    const h = home();
    const first = h.broker();
    const asked = first.handle.ask(makeAsk());
    await eventually(() => first.channel.deliveries[0]);
    first.channel.answers[0]?.({ decision: "approved", scope: "session", approverId: "cli:alice" });
    await asked;
    expect(h.db.prepare("SELECT count(*) AS n FROM consent_grants").get()).toEqual({ n: 0 });

    const second = h.broker();
    const windowed = second.handle.ask(makeAsk());
    await eventually(() => second.channel.deliveries[0]);
    second.channel.answers[0]?.({ decision: "approved", scope: { until: TEN_MINUTES }, approverId: "cli:alice" });
    await windowed;
    const row = h.db.prepare("SELECT key, grant_json FROM consent_grants").get() as { key: string; grant_json: string };
    const stored = JSON.parse(row.grant_json) as { request: never; response: ConsentResponseV02 };
    const { proof: _proof, ...unsigned } = stored.response;
    void _proof;
    const tampered = [
      // the end moved a day later
      {
        ...stored,
        response: {
          ...stored.response,
          conditions: { ...stored.response.conditions, valid_until: "2026-01-16T12:00:00.000Z" },
        },
      },
      // signed by a key that is not the home's
      {
        ...stored,
        response: createTestProofs().sign({
          response: unsigned,
          request: stored.request,
          arguments: makeAsk().arguments,
        }),
      },
      // not JSON of a grant at all
      "approve everything",
    ];
    for (const grant of tampered) {
      h.db.prepare("DELETE FROM consent_grants").run();
      h.grants.add(row.key, Date.parse("2026-01-16T12:00:00.000Z"), grant, 0);
      const next = h.broker();
      const asked = next.handle.ask(makeAsk());
      await eventually(() => next.channel.deliveries[0]);
      next.channel.answers[0]?.({ decision: "denied", approverId: "cli:alice" });
      expect((await asked).kind).toBe("denied");
    }
  });
});
