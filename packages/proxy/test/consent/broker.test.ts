import { describe, expect, it } from "vitest";
import { createPendingConsentStore, openStateDb } from "@acp/store";
import {
  createConsentRedactor,
  restoreRedacted,
  type ChannelDelivery,
  type ConsentBrokerOptions,
  type ConsentChannel,
  type HumanAnswer,
} from "../../src/consent/index.js";
import type { RequestedConsent } from "../../src/gate/index.js";
import { ManualTime, eventually, makeAsk, manualBroker } from "./fixtures.js";

/** A channel the test answers by hand. */
function scripted(name: string, available = true) {
  const deliveries: ChannelDelivery[] = [];
  const answers: ((a: HumanAnswer) => void)[] = [];
  const settled: string[] = [];
  const channel: ConsentChannel = {
    name,
    isAvailable: () => available,
    deliver: (delivery) =>
      new Promise<HumanAnswer>((resolve, reject) => {
        deliveries.push(delivery);
        answers.push(resolve);
        delivery.signal.addEventListener("abort", () => reject(new Error("aborted")));
      }),
    settle: (_request, outcome) => {
      settled.push(outcome);
    },
  };
  return { channel, deliveries, answers, settled };
}

function setup(channels: ConsentChannel[], extra: Partial<ConsentBrokerOptions> = {}) {
  const time = new ManualTime();
  const events: { type: string; fields: Record<string, unknown> }[] = [];
  const broker = manualBroker(channels, time, {
    audit: { record: (type, fields) => void events.push({ type, fields }) },
    ...extra,
  });
  return { broker, time, events };
}

describe("consent broker", () => {
  it("builds a §4.1 consent request with cr_ id, n_<uuid> nonce, expiry, redacted parameters and the rule", async () => {
    const a = scripted("a");
    const { broker } = setup([a.channel]);
    const pending = broker.ask(makeAsk({ timeoutMs: 30_000 }));
    const { request, reasons } = await eventually(() => a.deliveries[0]);
    expect(request).toMatchObject({
      type: "consent_request",
      version: "0.2.0",
      timestamp: "2026-01-15T12:00:00.000Z",
      expires_at: "2026-01-15T12:00:30.000Z",
      agent: { id: "test-agent" },
      action: { tool: "write_file", server: "fs", category: "write", risk_level: "medium" },
      policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
    });
    expect(request.id).toMatch(/^cr_[0-9a-f]{32}$/);
    expect(request.nonce).toMatch(/^n_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(request.action.parameters["api_token"]).toBe("[redacted]");
    expect(reasons[0]?.code).toBe("rule_matched");
    a.answers[0]?.({ decision: "denied", approverId: "x" });
    await pending;
  });

  it("tells the asker the request's id and expiry once it is made, before anyone answers", async () => {
    const a = scripted("a");
    const { broker } = setup([a.channel]);
    const told: RequestedConsent[] = [];
    const outcome = broker.ask(makeAsk({ onRequested: (request) => void told.push(request) }));
    await eventually(() => a.deliveries.length === 1);
    const delivered = a.deliveries[0];
    // the request and reasons as the channels get them (`acp serve` writes its pending row from them)
    expect(told).toEqual([
      {
        id: delivered?.request.id,
        expiresAt: delivered?.request.expires_at,
        request: delivered?.request,
        reasons: delivered?.reasons,
      },
    ]);
    expect(told[0]?.id).toMatch(/^cr_[0-9a-f]{32}$/);
    a.answers[0]?.({ decision: "denied", approverId: "alice", reason: "no" });
    expect((await outcome).kind).toBe("denied");
  });

  it("names the person who denied once, without repeating the channel in front of their name", async () => {
    const cli = scripted("cli");
    const { broker } = setup([cli.channel]);
    const first = broker.ask(makeAsk());
    await eventually(() => cli.deliveries.length === 1);
    cli.answers[0]?.({ decision: "denied", approverId: "cli:alice", reason: "not today" });
    expect(await first).toMatchObject({ kind: "denied", reason: "`alice` via cli: not today" });
    // an id that names another channel, or none, is shown as it is
    const second = broker.ask(makeAsk());
    await eventually(() => cli.deliveries.length === 2);
    cli.answers[1]?.({ decision: "denied", approverId: "telegram:42" });
    expect(await second).toMatchObject({ kind: "denied", reason: "`telegram:42` via cli" });
  });

  it("takes the first answer of several channels and stops the others", async () => {
    const a = scripted("a");
    const b = scripted("b");
    const { broker } = setup([a.channel, b.channel]);
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0] && b.deliveries[0]);
    b.answers[0]?.({ decision: "approved", approverId: "bob" });
    a.answers[0]?.({ decision: "denied", approverId: "alice" });
    const outcome = await pending;
    expect(outcome.kind).toBe("approved");
    expect(a.deliveries[0]?.signal.aborted).toBe(true);
    expect(a.settled).toEqual(["approved"]);
  });

  it("skips an unavailable channel and uses the next one", async () => {
    const off = scripted("off", false);
    const on = scripted("on");
    const { broker } = setup([off.channel, on.channel]);
    const pending = broker.ask(makeAsk());
    await eventually(() => on.deliveries[0]);
    expect(off.deliveries).toHaveLength(0);
    on.answers[0]?.({ decision: "approved", approverId: "x" });
    expect((await pending).kind).toBe("approved");
  });

  it("denies when every channel fails to deliver", async () => {
    const broken: ConsentChannel = {
      name: "broken",
      isAvailable: () => true,
      deliver: () => Promise.reject(new Error("boom")),
    };
    const { broker } = setup([broken]);
    const outcome = await broker.ask(makeAsk());
    expect(outcome).toMatchObject({ kind: "denied" });
    if (outcome.kind === "denied") expect(outcome.reason).toContain("broken: boom");
  });

  it("denies when the signed response does not verify, or signing throws", async () => {
    for (const extra of [{ verify: () => false }, { sign: () => Promise.reject(new Error("no key")) }]) {
      const a = scripted("a");
      const { broker } = setup([a.channel], extra);
      const pending = broker.ask(makeAsk());
      await eventually(() => a.deliveries[0]);
      a.answers[0]?.({ decision: "approved", approverId: "x" });
      expect((await pending).kind).toBe("denied");
    }
  });

  it("records the end of a request whose answer could not be signed (consent_denied), as any denial", async () => {
    const a = scripted("a");
    const { broker, events } = setup([a.channel], { sign: () => Promise.reject(new Error("no key")) });
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0]);
    a.answers[0]?.({ decision: "approved", approverId: "x" });
    expect(await pending).toEqual({
      kind: "denied",
      reason: "the answer could not be signed, so it is not used: no key",
    });
    expect(events.map((e) => e.type)).toEqual(["consent_requested", "consent_denied"]);
    expect(a.settled).toEqual(["denied"]);
  });

  it("says a response could not be checked (the nonce store failed), not that it failed verification", async () => {
    const a = scripted("a");
    const locked = (): never => {
      throw new Error("nonce store: database is locked");
    };
    const { broker } = setup([a.channel], { verify: locked });
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0]);
    a.answers[0]?.({ decision: "approved", approverId: "x" });
    const outcome = await pending;
    expect(outcome).toEqual({
      kind: "denied",
      reason: "the consent response could not be checked, so it is not used: nonce store: database is locked",
    });
  });

  it("denies a malformed answer instead of approving it", async () => {
    const a = scripted("a");
    const { broker } = setup([a.channel]);
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0]);
    a.answers[0]?.({ decision: "approved_with_modifications", approverId: "x" });
    const outcome = await pending;
    expect(outcome.kind).toBe("denied");
    if (outcome.kind === "denied") expect(outcome.reason).toContain("malformed answer");
  });

  it("audits the request and the approval with the whole signed response, and reused session approvals", async () => {
    const a = scripted("a");
    const { broker, events } = setup([a.channel]);
    const pending = broker.ask(makeAsk());
    await eventually(() => a.deliveries[0]);
    a.answers[0]?.({ decision: "approved", scope: "session", approverId: "x" });
    const outcome = await pending;
    await broker.ask(makeAsk());
    expect(events.map((e) => e.type)).toEqual(["consent_requested", "consent_approved", "consent_approved"]);
    const approved = events[1]?.fields;
    expect(approved).toMatchObject({
      tool: "write_file",
      server: "fs",
      session_id: "session-1",
      policy_rule: "policy:ask-writes",
    });
    expect((approved?.["metadata"] as Record<string, unknown>)["consent_response"]).toEqual(
      outcome.kind === "approved" ? outcome.consentResponse : null,
    );
    expect(events[2]?.fields["metadata"]).toMatchObject({ reused: true, scope: "session" });
  });

  it("denies when the audit trail cannot record the request (fail closed)", async () => {
    const a = scripted("a");
    const { broker } = setup([a.channel], { audit: { record: () => Promise.reject(new Error("disk full")) } });
    const outcome = await broker.ask(makeAsk());
    expect(outcome.kind).toBe("denied");
  });

  it("writes every request to the pending table and marks it withdrawn when the client cancels", async () => {
    const db = openStateDb(":memory:");
    const store = createPendingConsentStore(db);
    const a = scripted("a");
    const { broker } = setup([a.channel], { store });
    const controller = new AbortController();
    const pending = broker.ask(makeAsk({ signal: controller.signal }));
    const { request } = await eventually(() => a.deliveries[0]);
    expect(store.get(request.id)?.status).toBe("pending");
    controller.abort();
    expect(await pending).toEqual({ kind: "withdrawn" });
    expect(store.get(request.id)?.status).toBe("withdrawn");
    db.close();
  });

  it("denies a request its asker refuses once it is made, closing its row and telling no channel of it", async () => {
    const db = openStateDb(":memory:");
    const store = createPendingConsentStore(db);
    const a = scripted("a");
    const { broker, events } = setup([a.channel], { store });
    let id = "";
    const outcome = await broker.ask(
      makeAsk({
        onRequested: (request) => {
          id = request.id;
          throw new Error("too many consent requests are waiting");
        },
      }),
    );
    expect(outcome).toMatchObject({ kind: "denied" });
    expect(store.get(id)?.status).toBe("denied");
    // the channels never had it: nothing delivered, nothing settled (a webhook would hear of a request it never saw)
    expect(a.deliveries).toEqual([]);
    expect(a.settled).toEqual([]);
    expect(events.map((e) => e.type)).not.toContain("consent_requested");
    db.close();
  });

  it("returns withdrawn at once for an already-cancelled call", async () => {
    const a = scripted("a");
    const { broker } = setup([a.channel]);
    const controller = new AbortController();
    controller.abort();
    expect(await broker.ask(makeAsk({ signal: controller.signal }))).toEqual({ kind: "withdrawn" });
    expect(a.deliveries).toHaveLength(0);
  });

  it("a call cancelled while the channels are being checked is withdrawn, not left pending until it expires", async () => {
    const db = openStateDb(":memory:");
    const store = createPendingConsentStore(db);
    const a = scripted("a");
    let available: ((yes: boolean) => void) | undefined;
    const slow: ConsentChannel = { ...a.channel, isAvailable: () => new Promise<boolean>((r) => (available = r)) };
    const { broker } = setup([slow], { store });
    const controller = new AbortController();
    const pending = broker.ask(makeAsk({ signal: controller.signal }));
    const answer = await eventually(() => available);
    controller.abort();
    answer(true);
    expect(await pending).toEqual({ kind: "withdrawn" });
    expect(a.deliveries).toHaveLength(0);
    expect(store.listPending(0)).toEqual([]);
    db.close();
  });

  it("tells the waiting client it is waiting, and keeps telling it", async () => {
    const a = scripted("a");
    const { broker, time } = setup([a.channel], { progressIntervalMs: 5_000 });
    const progress: string[] = [];
    const pending = broker.ask(makeAsk({ onProgress: (m) => progress.push(m) }));
    await eventually(() => a.deliveries[0]);
    time.advance(10_000);
    expect(progress[0]).toContain("waiting for a person to approve `write_file`");
    expect(progress.filter((m) => m.startsWith("still waiting"))).toHaveLength(2);
    a.answers[0]?.({ decision: "denied", approverId: "x" });
    await pending;
  });
});

describe("redaction", () => {
  it("hides secret-looking keys at any depth and restores them after an edit", () => {
    const args = {
      token: "t",
      nested: { Password: "p", list: [{ api_key: "k" }] },
      Authorization: "Bearer x",
      path: "/a",
    };
    const shown = createConsentRedactor()(args) as Record<string, unknown>;
    expect(JSON.stringify(shown)).not.toMatch(/"t"|"p"|"k"|Bearer/);
    expect(shown["path"]).toBe("/a");
    const edited = { ...shown, path: "/b" };
    expect(restoreRedacted(args, edited)).toEqual({ ...args, path: "/b" });
  });
});

describe("consent broker: calls waiting for a person", () => {
  it("lets at most maxWaitingPerSession calls of one session wait for a person; the next is denied at once, asking nobody", async () => {
    const a = scripted("a");
    const { broker, events } = setup([a.channel], { maxWaitingPerSession: 2 });
    const first = broker.ask(makeAsk({ arguments: { n: 1 } }));
    const second = broker.ask(makeAsk({ arguments: { n: 2 } }));
    await eventually(() => a.deliveries.length === 2);
    const third = await broker.ask(makeAsk({ arguments: { n: 3 } }));
    expect(third).toEqual({
      kind: "denied",
      reason: "too many calls of this session are waiting for a person (2): answer or deny those first (`acp pending`)",
    });
    expect(a.deliveries).toHaveLength(2);
    const denied = events.filter((e) => e.type === "consent_denied");
    expect(denied.map((e) => (e.fields["metadata"] as { reason?: string }).reason)).toEqual([
      third.kind === "denied" ? third.reason : "",
    ]);
    // another session is not held back by this one
    const other = broker.ask(makeAsk({ sessionId: "session-2", arguments: { n: 4 } }));
    await eventually(() => a.deliveries.length === 3);
    // an answered request makes room again
    a.answers[0]?.({ decision: "denied", approverId: "x" });
    expect((await first).kind).toBe("denied");
    const fourth = broker.ask(makeAsk({ arguments: { n: 5 } }));
    await eventually(() => a.deliveries.length === 4);
    for (const answer of a.answers.slice(1)) answer({ decision: "denied", approverId: "x" });
    await Promise.all([second, other, fourth]);
  });
});
