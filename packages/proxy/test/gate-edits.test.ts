import { describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import type { Decide } from "../src/index.js";
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
