/**
 * `evaluatePolicy` and `matchPolicy` are public (`@acp/core`): an agent framework may call them without the
 * pipeline's request check in front. What the pipeline refuses as malformed they refuse too, in what they
 * read: a name no rule written for the name it shows can match, and an argument value that is not JSON. A
 * deny rule that simply did not match such a request let it through to the rules after it, or the default.
 */
import { describe, expect, it } from "vitest";
import { compilePolicy, evaluatePolicy, matchPolicy } from "../../src/evaluate/index.js";
import { createPipeline, policySource } from "../../src/pipeline/index.js";
import type { ActionRequest } from "../../src/request/index.js";
import { buildPolicy, rateLimit } from "./policy-builder.js";

const now = new Date("2026-03-02T10:00:00Z");
const policy = compilePolicy(
  buildPolicy(
    [
      { id: "no-drop", match: { tool: "delete_database" }, action: "deny" },
      { id: "no-prod", match: { server: "prod" }, action: "deny" },
      { id: "no-pay", match: { tool: "pay", args: { amount: "*" } }, action: "deny" },
      { id: "no-evil", match: { tool: "send_email", args: { "to.address": "*@evil.example" } }, action: "deny" },
      { id: "small-pay", match: { tool: "pay_small", args: { amount: 5 } }, action: "allow" },
      { id: "no-zero", match: { tool: "pay_zero", args: { amount: 0 } }, action: "deny" },
    ],
    "allow",
  ),
);
const pipeline = createPipeline([policySource(policy)]);

async function judged(request: ActionRequest): Promise<{ route: string; code: string | undefined; message: string }> {
  const verdict = await evaluatePolicy(policy, request, { now });
  return { route: verdict.route, code: verdict.reasons[0]?.code, message: verdict.reasons[0]?.message ?? "" };
}

describe("a request the pipeline would refuse as malformed, evaluated directly", () => {
  const hiddenNames: [string, string][] = [
    ["a zero-width space", "delete\u200b_database"],
    ["a NUL", "delete_database\u0000"],
    ["a soft hyphen", "delete\u00ad_database"],
    ["a right-to-left override", "\u202edelete_database"],
    ["a line break", "delete_database\n"],
    ["a leading space", " delete_database"],
    ["a lone surrogate", "delete_database\ud800"],
  ];
  it.each(hiddenNames)(
    "refuses a tool name holding %s, which a deny rule for the name it shows missed",
    async (_, tool) => {
      const request: ActionRequest = { tool, arguments: {} };
      expect((await pipeline.decide(request, now)).route).toBe("refuse");
      const verdict = await judged(request);
      expect(verdict).toMatchObject({ route: "refuse", code: "evaluation_error" });
      expect(verdict.message).toMatch(/^policy evaluation failed: invalid request: `tool` holds /);
    },
  );

  it("refuses a server name holding a character nobody sees", async () => {
    const verdict = await judged({ tool: "read_file", server: "pr\u200bod", arguments: {} });
    expect(verdict).toMatchObject({ route: "refuse", code: "evaluation_error" });
    expect(verdict.message).toMatch(/`server` holds /);
  });

  it("refuses an empty name and one longer than the pipeline takes", async () => {
    expect(await judged({ tool: "", arguments: {} })).toMatchObject({ route: "refuse", code: "evaluation_error" });
    const long = await judged({ tool: `delete_database${"x".repeat(300)}`, arguments: {} });
    expect(long).toMatchObject({ route: "refuse", code: "evaluation_error" });
    expect(long.message).toMatch(/`tool` is longer than 256 characters/);
    const server = await judged({ tool: "read_file", server: "p".repeat(257), arguments: {} });
    expect(server.message).toMatch(/`server` is longer than 256 characters/);
  });

  const notJson: [string, unknown][] = [
    ["an infinity (JSON text 1e400)", (JSON.parse('{"n":1e400}') as { n: number }).n],
    ["a negative infinity", -Infinity],
    ["NaN", Number.NaN],
    ["undefined", undefined],
    ["a bigint", 10n],
    ["a symbol", Symbol("x")],
    ["a function", () => 1],
    ["a Date", new Date(0)],
    ["a boxed string", Object("1000")],
    ["a Map", new Map([["a", 1]])],
  ];
  it.each(notJson)("refuses an argument a deny rule reads holding %s, which the rule missed", async (what, amount) => {
    const verdict = await judged({ tool: "pay", arguments: { amount } });
    expect(verdict, what).toMatchObject({ route: "refuse", code: "evaluation_error" });
    expect(verdict.message).toMatch(/^policy evaluation failed: invalid request: argument `amount` holds /);
  });

  it("refuses a hole in an array a deny rule reads, and a value that is not JSON on the way to the key", async () => {
    // eslint-disable-next-line no-sparse-arrays -- a hole is the hostile input under test
    expect(await judged({ tool: "pay", arguments: { amount: [1, , 3] } })).toMatchObject({ route: "refuse" });
    const boxed = { tool: "send_email", arguments: { to: new (class Recipient {})() } };
    expect(await judged(boxed)).toMatchObject({ route: "refuse", code: "evaluation_error" });
  });

  it("refuses such a value under an allow rule too, rather than weighing it", async () => {
    expect(await judged({ tool: "pay_small", arguments: { amount: Number.NaN } })).toMatchObject({ route: "refuse" });
    expect(await judged({ tool: "pay_small", arguments: { amount: 5 } })).toMatchObject({ route: "accept" });
  });

  it("still judges JSON values as before: -0 is zero, an object with no prototype is an object", () => {
    expect(matchPolicy(policy, { tool: "pay_zero", arguments: { amount: -0 } }, now).ruleId).toBe("no-zero");
    const to = Object.assign(Object.create(null) as object, { address: "a@evil.example" });
    expect(matchPolicy(policy, { tool: "send_email", arguments: { to } }, now).ruleId).toBe("no-evil");
    const own = JSON.parse('{"__proto__": {"address": "a@evil.example"}}') as object;
    expect(matchPolicy(policy, { tool: "send_email", arguments: { to: own } }, now).ruleId).toBe("default");
    // a value no rule reads is not the policy's to judge
    expect(matchPolicy(policy, { tool: "read_file", arguments: { n: Number.NaN } }, now).ruleId).toBe("default");
  });
});

describe("an error that cannot be shown", () => {
  // thrown by a getter of a request built in code, or by a rate limiter: `String()` of it throws too
  const unshowable: unknown = Object.create(null);
  const limited = compilePolicy(buildPolicy([{ id: "x", action: "allow", rate_limit: rateLimit("1/minute") }]));

  it("still gives a refusal, never a rejection", async () => {
    const request = {
      tool: "send_email",
      get arguments(): Record<string, unknown> {
        throw unshowable;
      },
    };
    const verdict = await evaluatePolicy(policy, request, { now });
    expect(verdict).toMatchObject({ route: "refuse", rule: "(error)" });
    expect(verdict.reasons[0]).toMatchObject({
      code: "evaluation_error",
      message: "policy evaluation failed: an error that cannot be shown",
    });
  });

  it("from a rate limiter, thrown or rejected, and from an error whose message cannot be read", async () => {
    const unreadable = new Proxy(new Error("x"), {
      getPrototypeOf() {
        throw unshowable;
      },
      get() {
        throw unshowable;
      },
    });
    const limiters = [
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a rejection with no Error is the input under test
      { consume: () => Promise.reject(unshowable) },
      {
        consume: () => {
          throw unreadable;
        },
      },
    ];
    for (const rateLimiter of limiters) {
      const verdict = await evaluatePolicy(limited, { tool: "send_email", arguments: {} }, { now, rateLimiter });
      expect(verdict).toMatchObject({ route: "refuse", action: "deny" });
      expect(verdict.reasons[0]?.code).toBe("evaluation_error");
    }
  });
});
