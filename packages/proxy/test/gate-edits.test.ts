import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { answeredBy, judgeEdit, MAX_EDIT_QUESTIONS, type ConsentOutcome, type Decide } from "../src/index.js";
import { createConsentBroker, type ChannelSettlement, type ConsentChannel } from "../src/consent/index.js";
import { createTestProofs } from "./consent/fixtures.js";
import { decision, fixture, memoryAudit, scriptedBroker, startInMemory, textOf } from "./harness.js";

/** `transfer` asks below 1000 and is refused from 1000 on (a standing deny rule). */
const byAmount: Decide = (request: ActionRequest) =>
  Promise.resolve(
    request.tool !== "transfer"
      ? decision("accept")
      : (request.arguments["amount"] as number) >= 1000
        ? decision("refuse", "policy:no-big-transfers", {
            reasons: [
              {
                source: "policy",
                code: "rule_matched",
                message: "rule `no-big-transfers` matched: deny",
                rule: "no-big-transfers",
              },
            ],
            verdicts: [{ source: "policy", route: "refuse", reasons: [] }],
          })
        : decision("ask", "policy:ask-transfers"),
  );

describe("arguments a person edited are judged again before they are forwarded", () => {
  it("an edit the standing rules refuse is refused and never reaches the upstream; an allowed edit goes through", async () => {
    const audit = memoryAudit();
    const broker = scriptedBroker((ask) => ({
      kind: "approved",
      // the approver "edits" 5 into 5000 and 6 into 60
      arguments: {
        amount: (ask.arguments["amount"] as number) * ((ask.arguments["amount"] as number) === 5 ? 1000 : 10),
      },
      consentResponse: { decision: "approved_with_modifications" },
      scope: "once",
    }));
    const env = await startInMemory({ upstreams: [fixture()], decide: byAmount, broker, audit });
    try {
      const refused = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe(
        "approved with edits, but the edited arguments are refused by policy rule `no-big-transfers`: rule `no-big-transfers` matched: deny",
      );
      expect(audit.events.some((e) => e.type === "tool_call_forwarded")).toBe(false);
      const judged = audit.events.find((e) => e.type === "policy_evaluated" && e.fields["edited_arguments"] === true);
      expect(judged?.fields).toMatchObject({ decision: "refuse", policy_rule: "policy:no-big-transfers" });
      // the person's approval is still on the record, with what they typed
      expect(audit.events.find((e) => e.type === "consent_approved")?.fields["forwarded_arguments"]).toEqual({
        amount: 5000,
      });

      const allowed = await env.client.callTool({ name: "transfer", arguments: { amount: 6 } });
      expect(textOf(allowed)).toBe("transferred 60");
    } finally {
      await env.close();
    }
  });

  it("judges the edit with recheckEdits when it is given (the standing rules, no session, no rate limit spent)", async () => {
    const rechecked: ActionRequest[] = [];
    const recheckEdits: Decide = (request) => {
      rechecked.push(request);
      return Promise.resolve(decision("refuse", "policy:recheck"));
    };
    const decided: ActionRequest[] = [];
    const decide: Decide = (request) => {
      decided.push(request);
      return Promise.resolve(decision("ask", "policy:ask"));
    };
    const broker = scriptedBroker(() => ({
      kind: "approved",
      arguments: { amount: 7 },
      consentResponse: {},
      scope: "once",
    }));
    const env = await startInMemory({ upstreams: [fixture()], decide, recheckEdits, broker });
    try {
      const result = await env.client.callTool({ name: "transfer", arguments: { amount: 3 } });
      expect(textOf(result)).toMatch(
        /^approved with edits, but the edited arguments are refused by policy rule `recheck`/,
      );
      expect(rechecked.map((r) => r.arguments)).toEqual([{ amount: 7 }]);
      expect(decided.map((r) => r.arguments)).toEqual([{ amount: 3 }]);
      // an approval without edits is not judged again
      const same = scriptedBroker(() => ({
        kind: "approved",
        arguments: { amount: 8 },
        consentResponse: {},
        scope: "once",
      }));
      const env2 = await startInMemory({ upstreams: [fixture()], decide, recheckEdits, broker: same });
      try {
        expect(textOf(await env2.client.callTool({ name: "transfer", arguments: { amount: 8 } }))).toBe(
          "transferred 8",
        );
        expect(rechecked).toHaveLength(1);
      } finally {
        await env2.close();
      }
    } finally {
      await env.close();
    }
  });
});

/** `transfer` asks under `ask-transfers` below 100, under `ask-big-transfers` (level high) from 100, refused from 1000. */
const twoAskRules: Decide = (request: ActionRequest) => {
  const amount = request.arguments["amount"] as number;
  if (request.tool !== "transfer") return Promise.resolve(decision("accept"));
  if (amount >= 1000) return byAmount(request);
  if (amount >= 100) return Promise.resolve(decision("ask", "policy:ask-big-transfers", { level: "high" }));
  // a small amount asks at level medium, a tiny one at low: the same rule, at two levels
  return Promise.resolve(decision("ask", "policy:ask-transfers", { level: amount < 3 ? "low" : "medium" }));
};

const approve = (args: Record<string, unknown>, edited: boolean): ConsentOutcome => ({
  kind: "approved",
  arguments: args,
  consentResponse: { decision: edited ? "approved_with_modifications" : "approved" },
  scope: "once",
});

describe("an edit that lands under an ask rule the person was not asked about is asked again", () => {
  it("puts the edited call to a person under the other rule, with its reasons; forwards only once that is approved", async () => {
    const audit = memoryAudit();
    // the first question is answered with 5 → 500; the second (about 500) is approved as it stands
    const broker = scriptedBroker((ask) =>
      ask.arguments["amount"] === 5 ? approve({ amount: 500 }, true) : approve(ask.arguments, false),
    );
    const env = await startInMemory({ upstreams: [fixture()], decide: twoAskRules, broker, audit });
    try {
      const result = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
      expect(textOf(result)).toBe("transferred 500");
      expect(broker.asks).toHaveLength(2);
      const again = broker.asks[1];
      expect(again?.arguments).toEqual({ amount: 500 });
      expect(again?.decision.rule).toBe("policy:ask-big-transfers");
      expect(again?.decision.level).toBe("high");
      expect(again?.decision.reasons[0]).toMatchObject({ source: "pipeline", code: "edit_asked_again" });
      expect(again?.decision.reasons[0]?.message).toContain("policy rule `ask-big-transfers`");
      // the re-decision is on the record, and the question it raised is a consent request of its own
      const judged = audit.events.find((e) => e.type === "policy_evaluated" && e.fields["edited_arguments"] === true);
      expect(judged?.fields).toMatchObject({ decision: "ask", policy_rule: "policy:ask-big-transfers" });
      expect(audit.events.filter((e) => e.type === "consent_requested")).toHaveLength(2);
      const types = audit.events.map((e) => e.type);
      expect(types.indexOf("tool_call_forwarded")).toBeGreaterThan(types.lastIndexOf("consent_approved"));
    } finally {
      await env.close();
    }
  });

  it("a no to the new question stops the call: the edited arguments never reach the upstream", async () => {
    const audit = memoryAudit();
    const broker = scriptedBroker((ask) =>
      ask.arguments["amount"] === 5
        ? approve({ amount: 500 }, true)
        : { kind: "denied", reason: "not that much", consentResponse: { decision: "denied" } },
    );
    const env = await startInMemory({ upstreams: [fixture()], decide: twoAskRules, broker, audit });
    try {
      const result = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^denied by a person: not that much/);
      expect(audit.events.some((e) => e.type === "tool_call_forwarded")).toBe(false);
    } finally {
      await env.close();
    }
  });

  it("an edit under the rule the person answered is not asked again (no endless re-asking); a stronger level is", async () => {
    const audit = memoryAudit();
    // 5 → 6 stays under ask-transfers at medium; 2 (low) → 4 (medium) is the same rule at a stronger level
    const broker = scriptedBroker((ask) => {
      const amount = ask.arguments["amount"] as number;
      if (amount === 5) return approve({ amount: 6 }, true);
      if (amount === 2) return approve({ amount: 4 }, true);
      return approve(ask.arguments, false);
    });
    const env = await startInMemory({ upstreams: [fixture()], decide: twoAskRules, broker, audit });
    try {
      expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 5 } }))).toBe("transferred 6");
      expect(broker.asks).toHaveLength(1);
      expect(textOf(await env.client.callTool({ name: "transfer", arguments: { amount: 2 } }))).toBe("transferred 4");
      expect(broker.asks.map((a) => a.arguments)).toEqual([{ amount: 5 }, { amount: 2 }, { amount: 4 }]);
      expect(broker.asks[2]?.decision.reasons[0]?.message).toContain("level medium, stronger than the low");
    } finally {
      await env.close();
    }
  });

  it("an approver whose edits keep landing under new rules is refused after a bounded number of questions", async () => {
    const audit = memoryAudit();
    // every amount has a rule of its own, and every answer adds one
    const decide: Decide = (request) =>
      Promise.resolve(decision("ask", `policy:ask-${String(request.arguments["amount"] as number)}`));
    const broker = scriptedBroker((ask) => approve({ amount: (ask.arguments["amount"] as number) + 1 }, true));
    const env = await startInMemory({ upstreams: [fixture()], decide, broker, audit });
    try {
      const result = await env.client.callTool({ name: "transfer", arguments: { amount: 1 } });
      expect(result.isError).toBe(true);
      expect(broker.asks).toHaveLength(MAX_EDIT_QUESTIONS);
      expect(textOf(result)).toMatch(/^approved with edits, but the edited arguments are refused by/);
      expect(textOf(result)).toContain(`approved with edits ${MAX_EDIT_QUESTIONS} times`);
      expect(audit.events.some((e) => e.type === "tool_call_forwarded")).toBe(false);
    } finally {
      await env.close();
    }
  });
});

describe("judgeEdit", () => {
  const answered = answeredBy(decision("ask", "policy:a", { level: "medium" }));
  it("lets an accepted edit or one under the answered rule stand, refuses a refused one, asks again otherwise", () => {
    expect(judgeEdit(decision("accept"), answered).kind).toBe("stands");
    expect(judgeEdit(decision("ask", "policy:a", { level: "low" }), answered).kind).toBe("stands");
    expect(judgeEdit(decision("refuse", "policy:deny"), answered).kind).toBe("refused");
    const asked = judgeEdit(decision("defer", "policy:b"), answered);
    expect(asked.kind).toBe("asked");
    if (asked.kind === "asked") expect(asked.answered.rules).toEqual(["policy:a", "policy:b"]);
    expect(judgeEdit(decision("ask", "policy:a", { level: "critical" }), answered).kind).toBe("asked");
    // the default action (no rule) is a question of its own too
    expect(judgeEdit(decision("ask", null), answered).kind).toBe("asked");
  });
});

describe("the channels hear what became of an edit, judged once", () => {
  it("a channel is told `edit_refused` with the rule, the agent gets the refusal, and the rules ran once", async () => {
    const rechecked: ActionRequest[] = [];
    const recheckEdits: Decide = (request) => {
      rechecked.push(request);
      return byAmount(request);
    };
    const settled: { outcome: ChannelSettlement; reason?: string }[] = [];
    const channel: ConsentChannel = {
      name: "terminal",
      isAvailable: () => true,
      deliver: () =>
        Promise.resolve({
          decision: "approved_with_modifications",
          modifications: { amount: 5000 },
          approverId: "terminal:alice",
        }),
      settle: (_request, outcome, _by, reason) => {
        settled.push({ outcome, ...(reason !== undefined ? { reason } : {}) });
      },
    };
    const broker = createConsentBroker({ channels: [channel], ...createTestProofs(), clock: () => new Date() });
    const audit = memoryAudit();
    const env = await startInMemory({ upstreams: [fixture()], decide: byAmount, recheckEdits, broker, audit });
    try {
      const result = await env.client.callTool({ name: "transfer", arguments: { amount: 5 } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^approved with edits, but the edited arguments are refused by policy rule `no-big-transfers`/,
      );
      expect(settled).toEqual([
        {
          outcome: "edit_refused",
          reason: "refused by policy rule `no-big-transfers`: rule `no-big-transfers` matched: deny",
        },
      ]);
      // the broker's judgement before the channels were told is the one the call was refused by
      expect(rechecked.map((r) => r.arguments)).toEqual([{ amount: 5000 }]);
      expect(audit.events.filter((e) => e.fields["edited_arguments"] === true)).toHaveLength(1);
      expect(audit.events.some((e) => e.type === "tool_call_forwarded")).toBe(false);
    } finally {
      await env.close();
      await broker.close();
    }
  });
});
