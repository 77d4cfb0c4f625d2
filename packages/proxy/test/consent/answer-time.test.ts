/**
 * The time a person answered, as the broker stamps the signed response: the channel's record of it, trusted
 * between the request's creation and the moment the broker reads the answer, never after the request expired.
 * Signed and verified with core's Ed25519 proofs, as `acp proxy` wires them (the request bound by `answers`).
 */
import { describe, expect, it } from "vitest";
import {
  ed25519KeyPairFromSeed,
  signResponseFor,
  verifyConsentProof,
  createMemoryNonceStore,
  type ConsentResponseV02 as CoreResponse,
} from "@acp/core";
import {
  createConsentBroker,
  type ChannelDelivery,
  type ConsentChannel,
  type ConsentResponseV02,
  type HumanAnswer,
  type SignConsentResponse,
  type VerifyConsentResponse,
} from "../../src/consent/index.js";
import { ManualTime, countingRandom, eventually, makeAsk } from "./fixtures.js";

const KEY = ed25519KeyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 7));
const T0 = Date.parse("2026-01-15T12:00:00.000Z");

function actionOf(request: { action: { server: string; tool: string } }, args: object, mods: object | null) {
  return { server: request.action.server, tool: request.action.tool, parameters: { ...args, ...(mods ?? {}) } };
}

const sign: SignConsentResponse = ({ response, request, arguments: args }) => {
  const { reason: _reason, ...unsigned } = response;
  void _reason;
  const action = actionOf(request, args, response.modifications);
  return signResponseFor(unsigned as Omit<CoreResponse, "proof">, action, KEY) as unknown as ConsentResponseV02;
};

function coreVerifier(): VerifyConsentResponse {
  const nonceStore = createMemoryNonceStore();
  return async ({ response, request, arguments: args, now }) => {
    const verdict = await verifyConsentProof(response, {
      expectedAction: actionOf(request, args, response.modifications),
      answers: request,
      trustedPublicKey: KEY.publicKeyHex,
      now,
      nonceStore,
    });
    return verdict.ok;
  };
}

/** A channel the test answers by hand. */
function scripted() {
  const deliveries: ChannelDelivery[] = [];
  const answers: ((a: HumanAnswer) => void)[] = [];
  const settled: string[] = [];
  const channel: ConsentChannel = {
    name: "cli",
    isAvailable: () => true,
    deliver: (delivery) =>
      new Promise<HumanAnswer>((resolve, reject) => {
        deliveries.push(delivery);
        answers.push(resolve);
        delivery.signal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
    settle: (_request, outcome) => void settled.push(outcome),
  };
  return { channel, deliveries, answers, settled };
}

/**
 * A broker whose clock the test sets without firing its timers: the request's expiry timer never fires, so an
 * answer reaches the broker only when the test says, at whatever time the clock then reads.
 */
function setup(extra: Partial<Parameters<typeof createConsentBroker>[0]> = {}) {
  let now = T0;
  const a = scripted();
  const events: string[] = [];
  const broker = createConsentBroker({
    channels: [a.channel],
    sign,
    verify: coreVerifier(),
    clock: () => new Date(now),
    timers: new ManualTime(T0),
    random: countingRandom(),
    progressIntervalMs: 0,
    audit: { record: (type) => void events.push(type) },
    ...extra,
  });
  return { broker, a, events, setNow: (ms: number) => void (now = ms) };
}

describe("the time a consent answer is stamped with", () => {
  it("approves an answer recorded just before the request expired and read just after, stamped when it was given", async () => {
    const { broker, a, setNow } = setup();
    const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
    await eventually(() => a.deliveries[0]);
    setNow(T0 + 121_000);
    a.answers[0]?.({ decision: "approved", approverId: "cli:alice", answeredAtMs: T0 + 119_000 });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    if (outcome.kind !== "approved") return;
    expect((outcome.consentResponse as ConsentResponseV02 | undefined)?.timestamp).toBe("2026-01-15T12:01:59.000Z");
    expect(a.settled).toEqual(["approved"]);
  });

  it("counts a session approval's 12 hours from when the person answered", async () => {
    const { broker, a, setNow } = setup();
    const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
    await eventually(() => a.deliveries[0]);
    setNow(T0 + 125_000);
    a.answers[0]?.({ decision: "approved", scope: "session", approverId: "cli:alice", answeredAtMs: T0 + 100_000 });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    if (outcome.kind !== "approved") return;
    expect((outcome.consentResponse as ConsentResponseV02 | undefined)?.conditions.valid_until).toBe(
      new Date(T0 + 100_000 + 12 * 3_600_000).toISOString(),
    );
  });

  it("does not use an answer recorded after the request expired: the request ends expired", async () => {
    const { broker, a, events, setNow } = setup();
    const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
    await eventually(() => a.deliveries[0]);
    setNow(T0 + 130_000);
    a.answers[0]?.({ decision: "approved", approverId: "cli:alice", answeredAtMs: T0 + 125_000 });
    expect(await pending).toEqual({ kind: "expired" });
    expect(a.settled).toEqual(["expired"]);
    expect(events).toEqual(["consent_requested", "consent_expired"]);
  });

  it("does not use an answer read after the request expired when the channel says nothing of when it was given", async () => {
    const { broker, a, setNow } = setup();
    const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
    await eventually(() => a.deliveries[0]);
    setNow(T0 + 121_000);
    a.answers[0]?.({ decision: "approved", approverId: "cli:alice" });
    expect(await pending).toEqual({ kind: "expired" });
  });

  it.each([
    ["after the broker read it", T0 + 119_500],
    ["before the request was made", T0 - 60_000],
    ["as no time at all", Number.NaN],
  ])("stamps the read time when the channel's time lies %s", async (_what, claimed) => {
    const { broker, a, setNow } = setup();
    const pending = broker.ask(makeAsk({ timeoutMs: 120_000 }));
    await eventually(() => a.deliveries[0]);
    setNow(T0 + 30_000);
    a.answers[0]?.({ decision: "approved", scope: "session", approverId: "cli:alice", answeredAtMs: claimed });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    if (outcome.kind !== "approved") return;
    expect((outcome.consentResponse as ConsentResponseV02 | undefined)?.timestamp).toBe("2026-01-15T12:00:30.000Z");
  });

  it("never signs a session approval longer than the 12 hours verifiers accept, whatever the option says", async () => {
    const { broker, a } = setup({ sessionApprovalMs: 48 * 3_600_000 });
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0]);
    a.answers[0]?.({ decision: "approved", scope: "session", approverId: "cli:alice" });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    if (outcome.kind !== "approved") return;
    expect((outcome.consentResponse as ConsentResponseV02 | undefined)?.conditions.valid_until).toBe(
      new Date(T0 + 12 * 3_600_000).toISOString(),
    );
  });
});
