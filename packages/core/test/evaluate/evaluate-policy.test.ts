import { describe, expect, it } from "vitest";
import {
  compilePolicy,
  createMemoryRateLimiter,
  evaluatePolicy,
  rateLimitKey,
  type RateLimiter,
} from "../../src/evaluate/index.js";
import type { ActionRequest } from "../../src/request/index.js";
import { buildPolicy, rateLimit } from "./policy-builder.js";

const now = new Date("2025-03-10T12:00:00Z");
const policy = compilePolicy(
  buildPolicy(
    [
      { id: "reads", match: { category: "read" }, action: "allow", rate_limit: rateLimit("2/minute") },
      {
        id: "mail",
        match: { tool: "send_*" },
        action: "ask",
        level: "high",
        timeout: 120,
        rate_limit: rateLimit("1/hour"),
      },
      { id: "no-prod", match: { server: "prod" }, action: "deny", rate_limit: rateLimit("1/day") },
      { id: "deploy", match: { tool: "deploy_*" }, action: "allow" },
    ],
    "ask",
  ),
);
const req = (tool: string, extra: Partial<ActionRequest> = {}): ActionRequest => ({ tool, arguments: {}, ...extra });

describe("evaluatePolicy", () => {
  it("maps allow to accept, ask to ask, deny to refuse", async () => {
    const limiter = createMemoryRateLimiter();
    expect(await evaluatePolicy(policy, req("deploy_x"), { now })).toMatchObject({
      route: "accept",
      action: "allow",
      rule: "deploy",
    });
    expect(await evaluatePolicy(policy, req("send_x"), { now, rateLimiter: limiter })).toMatchObject({
      source: "policy",
      route: "ask",
      action: "ask",
      rule: "mail",
      level: "high",
      timeout: 120,
      category: "communication",
      risk_level: "high",
    });
    expect(await evaluatePolicy(policy, req("zap", { server: "prod" }), { now })).toMatchObject({
      route: "refuse",
      rule: "no-prod",
    });
    expect(await evaluatePolicy(policy, req("zap"), { now })).toMatchObject({
      route: "ask",
      action: "ask",
      rule: "default",
    });
  });

  it("refuses with rate_limited once the matched rule's limit is spent, naming the rule and the limit", async () => {
    const limiter = createMemoryRateLimiter();
    const opts = { now, rateLimiter: limiter };
    expect((await evaluatePolicy(policy, req("read_a"), opts)).route).toBe("accept");
    expect((await evaluatePolicy(policy, req("read_b"), opts)).route).toBe("accept");
    const third = await evaluatePolicy(policy, req("read_c"), opts);
    expect(third).toMatchObject({ route: "refuse", action: "deny", rule: "reads" });
    expect(third.reasons.map((r) => r.code)).toEqual(["rule_matched", "rate_limited"]);
    // when the window frees a slot: the first call was counted now, so 60 s from now
    expect(third.reasons[1]?.message).toBe("rule `reads` is rate limited: limit `2/minute` spent; try again in 60 s");
    const soon = await evaluatePolicy(policy, req("read_c"), {
      now: new Date(now.getTime() + 59_001),
      rateLimiter: limiter,
    });
    expect(soon.reasons[1]?.message).toBe("rule `reads` is rate limited: limit `2/minute` spent; try again in 1 s");
    const later = await evaluatePolicy(policy, req("read_d"), {
      now: new Date(now.getTime() + 61_000),
      rateLimiter: limiter,
    });
    expect(later.route).toBe("accept");
  });

  it("checks only the matched rule's limit, keyed by rule id", async () => {
    const keys: string[] = [];
    const spy: RateLimiter = {
      consume(key) {
        keys.push(key);
        return { allowed: true, remaining: 0, resetAtMs: 0 };
      },
    };
    await evaluatePolicy(policy, req("send_x"), { now, rateLimiter: spy });
    await evaluatePolicy(policy, req("deploy_x"), { now, rateLimiter: spy });
    await evaluatePolicy(policy, req("zap", { server: "prod" }), { now, rateLimiter: spy });
    expect(keys).toEqual([rateLimitKey("mail")]);
  });

  it("refuses a rate-limited rule when no limiter is configured", async () => {
    const v = await evaluatePolicy(policy, req("read_a"), { now });
    expect(v.route).toBe("refuse");
    expect(v.reasons.at(-1)?.code).toBe("rate_limit_unavailable");
  });

  it("fails closed when the limiter throws or rejects", async () => {
    const throwing: RateLimiter = {
      consume() {
        throw new Error("database is locked");
      },
    };
    const rejecting: RateLimiter = { consume: () => Promise.reject(new Error("connection reset")) };
    for (const rateLimiter of [throwing, rejecting]) {
      const v = await evaluatePolicy(policy, req("read_a"), { now, rateLimiter });
      expect(v).toMatchObject({ route: "refuse", action: "deny", rule: "(error)", category: "read" });
      expect(v.reasons[0]?.code).toBe("evaluation_error");
    }
  });

  it("refuses a malformed request with the error as the reason", async () => {
    const v = await evaluatePolicy(policy, { tool: 42 } as unknown as ActionRequest, { now });
    expect(v).toMatchObject({ route: "refuse", category: "system", risk_level: "critical" });
    expect(v.reasons[0]?.message).toBe("policy evaluation failed: invalid request: `tool` must be a string");
  });

  it("refuses on an invalid clock", async () => {
    const v = await evaluatePolicy(policy, req("deploy_x"), { now: new Date("nope") });
    expect(v.route).toBe("refuse");
  });
});
