import { describe, expect, it } from "vitest";
import type { Decision } from "@acp/core";
import { createApprovalMemory, gateToolCall, type ConsentOutcome } from "../src/gate/index.js";
import { fixture, memoryAudit, startInMemory } from "./harness.js";

/** The §7.4 fields the gate sets, event by event, for one call that asks a person. */
async function gatedCall(outcome: ConsentOutcome, answerAfterMs: number) {
  let clock = Date.parse("2026-01-15T12:00:00.000Z");
  const events: { type: string; fields: Record<string, unknown> }[] = [];
  const decision: Decision = {
    route: "ask",
    action: "ask",
    rule: "policy:ask-transfers",
    category: "financial",
    risk_level: "critical",
    reasons: [],
    verdicts: [],
  };
  const verdict = await gateToolCall(
    {
      decide: () => Promise.resolve(decision),
      broker: {
        ask: async (ask) => {
          await ask.onRequested?.({ id: `cr_${"a".repeat(32)}`, expiresAt: "2026-01-15T12:02:00.000Z" });
          clock += answerAfterMs; // the person takes this long (the injected clock, no real wait)
          return outcome;
        },
      },
      audit: { record: (type, fields) => void events.push({ type, fields }) },
      approvals: createApprovalMemory(),
      now: () => new Date(clock),
      consentTimeoutMs: 120_000,
    },
    {
      callId: "call-1",
      server: "bank",
      tool: "transfer",
      arguments: { amount: 5 },
      sessionId: "session-1",
      agent: "mail-assistant",
      signal: new AbortController().signal,
    },
  );
  return { verdict, events };
}

describe("the gate's audit events fill the §7.4 fields it knows", () => {
  it("names the agent on every event of the call, not only on tool_call_intercepted", async () => {
    const approved: ConsentOutcome = { kind: "approved", arguments: { amount: 5 }, consentResponse: {}, scope: "once" };
    const { verdict, events } = await gatedCall(approved, 0);
    expect(verdict.kind).toBe("forward");
    expect(events.map((e) => e.type)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "consent_requested",
      "consent_approved",
    ]);
    for (const e of events) expect(e.fields["agent"], e.type).toBe("mail-assistant");
  });

  it("records response_time_ms, how long the person took, on the answer (approved, denied, expired, withdrawn)", async () => {
    const outcomes: [ConsentOutcome, string][] = [
      [{ kind: "approved", arguments: { amount: 5 }, consentResponse: {}, scope: "once" }, "consent_approved"],
      [{ kind: "denied", reason: "not now" }, "consent_denied"],
      [{ kind: "expired" }, "consent_expired"],
      [{ kind: "withdrawn" }, "consent_withdrawn"],
    ];
    for (const [outcome, type] of outcomes) {
      const { events } = await gatedCall(outcome, 4_200);
      const answer = events.find((e) => e.type === type);
      expect(answer?.fields["response_time_ms"], type).toBe(4_200);
      expect(answer?.fields["request_id"], type).toBe(`cr_${"a".repeat(32)}`);
      // the request itself was made before anyone answered: it has no response time
      expect(events.find((e) => e.type === "consent_requested")?.fields["response_time_ms"]).toBeUndefined();
    }
  });

  it("hands the proxy what the later events of an approved call carry: category, risk, rule and the request", async () => {
    const approved: ConsentOutcome = {
      kind: "approved",
      arguments: { amount: 5 },
      consentResponse: { request_id: `cr_${"a".repeat(32)}` },
      scope: "once",
    };
    const { verdict } = await gatedCall(approved, 0);
    expect(verdict.kind === "forward" ? verdict.decided : undefined).toEqual({
      category: "financial",
      risk_level: "critical",
      policy_rule: "policy:ask-transfers",
      request_id: `cr_${"a".repeat(32)}`,
    });
  });
});

describe("the proxy's events after the gate (tool_call_forwarded, tool_call_completed)", () => {
  it("carry the call's agent, category, risk and rule, and how long the upstream took", async () => {
    const audit = memoryAudit();
    let clock = Date.parse("2026-01-15T12:00:00.000Z");
    const env = await startInMemory({
      upstreams: [fixture()],
      audit,
      agent: "mail-assistant",
      now: () => new Date((clock += 7)), // every reading of the clock is 7 ms later
    });
    try {
      await env.client.callTool({ name: "echo", arguments: { text: "hi" } });
      const of = (type: string) => audit.events.find((e) => e.type === type)?.fields;
      for (const type of ["tool_call_forwarded", "tool_call_completed"]) {
        expect(of(type), type).toMatchObject({
          agent: "mail-assistant",
          category: "write",
          risk_level: "medium",
          policy_rule: null,
          server: "fixture",
          tool: "echo",
        });
      }
      expect(of("tool_call_completed")?.["response_time_ms"]).toBe(7);
    } finally {
      await env.close();
    }
  });
});
