import { describe, expect, it } from "vitest";
import type { ConsentAsk, ConsentBroker, ConsentOutcome } from "@acp/proxy";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

const NOW = new Date("2026-01-15T12:00:00Z");
const INTENT = {
  goal: "Summarise my day and mail it to me",
  allowed_actions: ["cal.read_events", "mail.send_email", "bank.pay_bill"],
  confirm_actions: ["bank.pay_*"],
  trusted_values: { recipients: ["me@example.com"] },
};
const TOOLS = ["cal.read_events", "mail.send_email", "bank.pay_bill"];
const signal = new AbortController().signal;

function broker(answer: "approve" | "deny" | "wait"): ConsentBroker & { asks: ConsentAsk[] } {
  const asks: ConsentAsk[] = [];
  return {
    asks,
    ask(request) {
      asks.push(request);
      if (answer === "wait") return new Promise<ConsentOutcome>(() => undefined);
      return Promise.resolve(
        answer === "approve"
          ? { kind: "approved", arguments: {}, consentResponse: {}, scope: "once" }
          : { kind: "denied", reason: "no" },
      );
    },
  };
}

function runtimeWith(b: ConsentBroker) {
  return createProxySessionRuntime({
    intent: INTENT,
    trustedServers: [],
    classify: [],
    now: () => NOW,
    broker: () => b,
  });
}

const steps = (...s: object[]) => ({ steps: s });
const SEND_TO_ME = { action: "mail.send_email", constraints: { to: { from_trusted: "recipients" } } };

describe("acp_submit_plan: a plan that only narrows the intent needs no person", () => {
  it("approves by rule when every step is in the intent, none needs a person and constraints use named values", async () => {
    for (const plan of [
      steps({ action: "cal.read_events" }, SEND_TO_ME),
      steps({ action: "mail.send_email", constraints: { to: { exact: "me@example.com" } } }),
      steps({ action: "mail.send_email", constraints: { to: { one_of: ["ME@example.com"] } } }),
    ]) {
      const b = broker("deny");
      const runtime = runtimeWith(b);
      const out = await runtime.plans.submit("s", plan, signal, { tools: TOOLS });
      expect(out).toMatchObject({ approved: true });
      expect(out.text).toContain("approved by rule `plan-narrows-intent`");
      expect(b.asks).toEqual([]);
      expect(runtime.sessionOf("s")?.state).toBe("executing");
      expect(runtime.sessionOf("s")?.planHash).toMatch(/^sha256:/);
      const approved = runtime.sessionOf("s")?.events.find((e) => e.type === "confirmation_answered");
      expect(approved?.message).toContain("rule:plan-narrows-intent");
    }
  });

  it("puts a plan before a person when a constraint names a value nobody named, uses a glob, or a step needs confirmation", async () => {
    const widening = [
      steps({ action: "mail.send_email", constraints: { to: { exact: "mark@attacker.example" } } }),
      steps({ action: "mail.send_email", constraints: { to: { glob: "*@example.com" } } }),
      steps({ action: "bank.pay_bill", constraints: { iban: { exact: "me@example.com" } } }),
    ];
    for (const plan of widening) {
      const denied = broker("deny");
      const runtime = runtimeWith(denied);
      const out = await runtime.plans.submit("s", plan, signal, { tools: TOOLS });
      expect(out.approved).toBe(false);
      expect(denied.asks).toHaveLength(1);
      expect(runtime.sessionOf("s")?.plan).toBeNull();
      expect(runtime.sessionOf("s")?.state).toBe("executing");
      const approving = broker("approve");
      const again = runtimeWith(approving);
      const yes = await again.plans.submit("s", plan, signal, { tools: TOOLS });
      expect(yes.approved).toBe(true);
      expect(yes.text).toContain("approved by a person");
      expect(approving.asks).toHaveLength(1);
    }
  });

  it("refuses the same plan submitted twice and leaves the approved plan in force", async () => {
    const runtime = runtimeWith(broker("deny"));
    const plan = steps(SEND_TO_ME);
    expect((await runtime.plans.submit("s", plan, signal, { tools: TOOLS })).approved).toBe(true);
    const hash = runtime.sessionOf("s")?.planHash;
    const twice = await runtime.plans.submit("s", plan, signal, { tools: TOOLS });
    expect(twice).toMatchObject({ approved: false });
    expect(twice.text).toContain("already approved");
    expect(runtime.sessionOf("s")?.planHash).toBe(hash);
    expect(runtime.sessionOf("s")?.state).toBe("executing");
  });

  it("refuses a second plan while the first waits for a person", async () => {
    const runtime = runtimeWith(broker("wait"));
    void runtime.plans.submit("s", steps({ action: "bank.pay_bill" }), signal, { tools: TOOLS });
    await new Promise((r) => setTimeout(r, 10));
    const second = await runtime.plans.submit("s", steps({ action: "cal.read_events" }), signal, { tools: TOOLS });
    expect(second).toMatchObject({ approved: false });
    expect(second.text).toContain("already waiting");
  });

  it("refuses a plan naming a tool no upstream offers: nobody is asked and no plan is in force", async () => {
    const b = broker("approve");
    const runtime = runtimeWith(b);
    const out = await runtime.plans.submit(
      "s",
      steps({ action: "cal.read_events" }, { action: "bank.pay_bill" }),
      signal,
      { tools: ["cal.read_events", "mail.send_email"] },
    );
    expect(out).toMatchObject({ approved: false });
    expect(out.text).toContain("step 2 names `bank.pay_bill`, which no upstream server offers");
    expect(b.asks).toEqual([]);
    expect(runtime.sessionOf("s")?.plan).toBeNull();
    expect(runtime.sessionOf("s")?.proposedPlan).toBeNull();
  });

  it("a plan outside the intent is refused without asking anyone", async () => {
    const b = broker("approve");
    const runtime = runtimeWith(b);
    const out = await runtime.plans.submit("s", steps({ action: "mail.delete_all" }), signal, {
      tools: [...TOOLS, "mail.delete_all"],
    });
    expect(out.approved).toBe(false);
    expect(out.text).toContain("does not fit the intent");
    expect(b.asks).toEqual([]);
  });
});
