/**
 * A request's own `category` / `risk_level` come from the caller (an agent), which is not trusted: they
 * may make a decision stricter, never looser. Reproduces the finding against `POST /v1/decide` with the
 * starter policy: `{"tool":"transfer_funds","category":"read"}` was accepted by `allow-reads`.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { STARTER_POLICY } from "@acp/store";
import {
  CATEGORIES,
  RISK_LEVELS,
  assertPolicy,
  classifyAction,
  classifyDerived,
  classifyGuarded,
  compilePolicy,
  createPipeline,
  evaluatePolicy,
  matchPolicy,
  policySource,
  routeStrictness,
  type ActionRequest,
  type RateLimiter,
} from "../../src/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");
const STARTER = compilePolicy(assertPolicy(STARTER_POLICY));

function starterPipeline() {
  return createPipeline([policySource(STARTER)]);
}

describe("a request's own category never loosens a decision (starter policy)", () => {
  it("refuses transfer_funds declared `read` as it refuses it undeclared", async () => {
    const pipeline = starterPipeline();
    const plain = await pipeline.decide({ tool: "transfer_funds", arguments: { amount: 5000 } }, NOW);
    expect(plain).toMatchObject({ route: "refuse", rule: "policy:refuse-financial", category: "financial" });
    const declared = await pipeline.decide(
      { tool: "transfer_funds", category: "read", arguments: { amount: 5000 } },
      NOW,
    );
    expect(declared).toMatchObject({
      route: "refuse",
      action: "deny",
      rule: "policy:refuse-financial",
      category: "financial",
      risk_level: "critical",
    });
    const why = declared.reasons.find((r) => r.code === "caller_category_not_used");
    expect(why?.message).toContain("`read`");
    expect(why?.message).toContain("allow-reads");
    expect(why?.message).toContain("never looser");
    expect(why?.rule).toBe("refuse-financial");
  });

  it("refuses exec_shell declared `read`", async () => {
    const decision = await starterPipeline().decide(
      { tool: "exec_shell", category: "read", arguments: { cmd: "rm -rf ~" } },
      NOW,
    );
    expect(decision).toMatchObject({ route: "refuse", rule: "policy:refuse-system", category: "system" });
  });

  it("does not let a declared `read` turn an ask into an accept (send_email)", async () => {
    const decision = await starterPipeline().decide(
      { tool: "send_email", category: "read", risk_level: "low", arguments: { to: "x@y.z" } },
      NOW,
    );
    expect(decision).toMatchObject({ route: "ask", rule: "policy:ask-communication", risk_level: "high" });
    expect(decision.reasons.map((r) => r.code)).toEqual(
      expect.arrayContaining(["caller_category_not_used", "caller_risk_not_used"]),
    );
  });

  it("still lets a declared stricter category tighten (read_balance declared financial is refused)", async () => {
    const decision = await starterPipeline().decide(
      { tool: "read_balance", category: "financial", arguments: {} },
      NOW,
    );
    expect(decision).toMatchObject({
      route: "refuse",
      rule: "policy:refuse-financial",
      category: "financial",
      risk_level: "critical",
    });
    expect(decision.reasons.some((r) => r.code === "caller_category_stricter")).toBe(true);
  });

  it("adds nothing for a request whose declared category is the derived one", async () => {
    const plain = await starterPipeline().decide({ tool: "read_file", arguments: {} }, NOW);
    const same = await starterPipeline().decide({ tool: "read_file", category: "read", arguments: {} }, NOW);
    expect(same.route).toBe("accept");
    expect(same.reasons).toEqual(plain.reasons);
  });

  it("still refuses an explicit category that is not a known word", async () => {
    const decision = await starterPipeline().decide({ tool: "read_file", category: "reed", arguments: {} }, NOW);
    expect(decision).toMatchObject({ route: "refuse" });
    expect(decision.reasons[0]?.code).toBe("invalid_request");
    const verdict = await evaluatePolicy(
      STARTER,
      { tool: "read_file", category: "reed", arguments: {} } as unknown as ActionRequest,
      { now: NOW },
    );
    expect(verdict).toMatchObject({ route: "refuse", rule: "(error)" });
  });
});

describe("a policy `classify:` entry holds against a lower declared category", () => {
  const policy = compilePolicy(
    assertPolicy(`
version: "1"
default_action: ask
classify:
  - tool: "wire_*"
    category: financial
rules:
  - id: no-money
    match: { category: financial }
    action: deny
  - id: reads
    match: { category: read }
    action: allow
`),
  );

  it("refuses wire_money declared `read`, naming the classify entry", async () => {
    const verdict = await evaluatePolicy(policy, { tool: "wire_money", category: "read", arguments: {} }, { now: NOW });
    expect(verdict).toMatchObject({ route: "refuse", rule: "no-money", category: "financial", risk_level: "critical" });
    expect(verdict.reasons.find((r) => r.code === "caller_category_not_used")?.message).toContain("`classify:`");
  });

  it("takes the derived rule when both classifications give the same action", () => {
    const p = compilePolicy(
      assertPolicy(`
version: "1"
default_action: deny
rules:
  - id: writes
    match: { category: write }
    action: ask
    level: medium
  - id: mail
    match: { category: communication }
    action: ask
    level: high
`),
    );
    const m = matchPolicy(p, { tool: "send_email", category: "write", arguments: {} }, NOW);
    expect(m).toMatchObject({ ruleId: "mail", category: "communication", risk_level: "high" });
  });
});

describe("rate limits under a declared category", () => {
  const policy = compilePolicy(
    assertPolicy(`
version: "1"
default_action: deny
rules:
  - id: mail
    match: { category: communication }
    action: allow
    rate_limit: "1/minute"
  - id: public
    match: { category: public }
    action: ask
`),
  );
  const spent: RateLimiter = { consume: () => ({ allowed: false, remaining: 0, resetAtMs: 0 }) };

  it("a stricter declared category cannot escape the derived rule's spent limit", async () => {
    const plain = await evaluatePolicy(policy, { tool: "send_email", arguments: {} }, { now: NOW, rateLimiter: spent });
    expect(plain.route).toBe("refuse");
    const declared = await evaluatePolicy(
      policy,
      { tool: "send_email", category: "public", arguments: {} },
      { now: NOW, rateLimiter: spent },
    );
    expect(declared).toMatchObject({ route: "refuse", action: "deny", rule: "public" });
    expect(declared.reasons.some((r) => r.code === "rate_limited" && r.rule === "mail")).toBe(true);
  });

  it("spends no limit on a call the declared category refuses, and the derived rule's limit when it asks", async () => {
    const counted: string[] = [];
    const counting: RateLimiter = {
      consume: (key) => {
        counted.push(key);
        return { allowed: true, remaining: 1, resetAtMs: 0 };
      },
    };
    const asked = await evaluatePolicy(
      policy,
      { tool: "send_email", category: "public", arguments: {} },
      { now: NOW, rateLimiter: counting },
    );
    expect(asked).toMatchObject({ route: "ask", rule: "public" });
    expect(counted).toEqual(["policy:mail"]);
    counted.length = 0;
    const refused = await evaluatePolicy(
      policy,
      { tool: "send_email", category: "financial", arguments: {} },
      { now: NOW, rateLimiter: counting },
    );
    expect(refused).toMatchObject({ route: "refuse", rule: "default" });
    expect(counted).toEqual([]);
  });
});

describe("classification functions", () => {
  it("classifyDerived ignores the request's own fields; classifyGuarded keeps the derived category and the higher risk", () => {
    const r: ActionRequest = { tool: "transfer_funds", category: "read", risk_level: "low", arguments: {} };
    expect(classifyAction(r, [])).toEqual({ category: "read", risk_level: "low", source: "explicit" });
    expect(classifyDerived(r, [])).toEqual({ category: "financial", risk_level: "critical", source: "builtin" });
    expect(classifyGuarded(r, [])).toEqual({ category: "financial", risk_level: "critical", source: "builtin" });
    const raised: ActionRequest = { tool: "read_file", risk_level: "high", arguments: {} };
    expect(classifyGuarded(raised, [])).toEqual({ category: "read", risk_level: "high", source: "explicit" });
  });

  it("reports the derived category and the higher risk when no policy judges", async () => {
    const pipeline = createPipeline([
      { name: "session", evaluate: () => ({ source: "session", route: "ask", reasons: [] }) },
    ]);
    const d = await pipeline.decide(
      { tool: "transfer_funds", category: "read", risk_level: "low", arguments: {} },
      NOW,
    );
    expect(d).toMatchObject({ category: "financial", risk_level: "critical" });
  });
});

describe("property: a declared category or risk never loosens the policy's route", () => {
  const POLICY = compilePolicy(
    assertPolicy(`
version: "1"
default_action: ask
classify:
  - tool: "crm_*"
    category: communication
  - tool: "ledger_*"
    server: "bank*"
    category: financial
rules:
  - id: bank-reads
    match: { server: "bank", category: read }
    action: allow
    rate_limit: "3/minute"
  - id: no-money
    match: { category: financial }
    action: deny
  - id: colleagues
    match: { tool: "send_*", args: { to: "*@corp.com" } }
    action: allow
    rate_limit: "2/minute"
  - id: reads
    match: { category: read }
    action: allow
  - id: no-shell
    match: { tool: "exec*" }
    action: deny
  - id: writes
    match: { category: write }
    action: ask
  - id: publish
    match: { category: public }
    action: allow
    rate_limit: "1/minute"
  - id: system
    match: { category: system }
    action: deny
`),
  );
  const TOOLS = [
    "read_file",
    "send_email",
    "transfer_funds",
    "exec_shell",
    "crm_note",
    "ledger_read",
    "frob",
    "post_x",
  ];
  const request = fc.record(
    {
      tool: fc.constantFrom(...TOOLS),
      server: fc.constantFrom("bank", "bank-eu", "mail"),
      arguments: fc.record({ to: fc.constantFrom("a@corp.com", "e@evil.com") }, { requiredKeys: [] }),
      annotations: fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
    },
    { requiredKeys: ["tool", "arguments"] },
  );
  const allow: RateLimiter = { consume: () => ({ allowed: true, remaining: 1, resetAtMs: 0 }) };
  const spent: RateLimiter = { consume: () => ({ allowed: false, remaining: 0, resetAtMs: 0 }) };
  const RISK_RANK = (r: string): number => (RISK_LEVELS as readonly string[]).indexOf(r);

  it("the route with an explicit category or risk is never looser than without, nor the risk lower", async () => {
    await fc.assert(
      fc.asyncProperty(
        request,
        fc.option(fc.constantFrom(...CATEGORIES), { nil: undefined }),
        fc.option(fc.constantFrom(...RISK_LEVELS), { nil: undefined }),
        fc.constantFrom(allow, spent),
        async (base, category, risk, rateLimiter) => {
          const bare = base as ActionRequest;
          const declared: ActionRequest = {
            ...bare,
            ...(category !== undefined ? { category } : {}),
            ...(risk !== undefined ? { risk_level: risk } : {}),
          };
          const without = await evaluatePolicy(POLICY, bare, { now: NOW, rateLimiter });
          const withIt = await evaluatePolicy(POLICY, declared, { now: NOW, rateLimiter });
          expect(routeStrictness(withIt.route)).toBeGreaterThanOrEqual(routeStrictness(without.route));
          expect(RISK_RANK(withIt.risk_level)).toBeGreaterThanOrEqual(RISK_RANK(without.risk_level));
          // a declared category that changes the route decides only by being stricter
          if (withIt.route !== without.route) {
            expect(withIt.reasons.some((r) => r.code === "caller_category_stricter")).toBe(true);
          }
        },
      ),
      { numRuns: 600 },
    );
  });
});

describe('a caller\'s annotations never loosen a decision either (`annotations: "caller"`)', () => {
  const annotated = { tool: "run_migration", arguments: { db: "prod" }, annotations: { readOnlyHint: true } };

  it("asks about run_migration marked read-only by its caller, as without the mark (starter policy)", async () => {
    const fromCaller = createPipeline([policySource(STARTER)], { annotations: "caller" });
    const plain = await fromCaller.decide({ tool: "run_migration", arguments: { db: "prod" } }, NOW);
    expect(plain).toMatchObject({ route: "ask", rule: "policy:ask-writes", category: "write" });
    const marked = await fromCaller.decide(annotated, NOW);
    expect(marked).toMatchObject({ route: "ask", rule: "policy:ask-writes", category: "write" });
    expect(marked.reasons.some((r) => r.code === "caller_category_not_used")).toBe(true);
    // from an upstream server (acp proxy, the default) the same mark classifies the unknown tool a read
    const fromServer = await createPipeline([policySource(STARTER)]).decide(annotated, NOW);
    expect(fromServer).toMatchObject({ route: "accept", rule: "policy:allow-reads" });
  });

  it("keeps what a caller's annotations tighten: a read tool marked destructive is a write", async () => {
    const fromCaller = createPipeline([policySource(STARTER)], { annotations: "caller" });
    const decision = await fromCaller.decide(
      { tool: "read_file", arguments: { path: "/a" }, annotations: { readOnlyHint: false, destructiveHint: true } },
      NOW,
    );
    expect(decision).toMatchObject({ route: "ask", rule: "policy:ask-writes", category: "write", risk_level: "high" });
  });

  it("is never looser than the same request without annotations (property)", async () => {
    const fromCaller = createPipeline([policySource(STARTER)], { annotations: "caller" });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("run_migration", "read_file", "send_email", "delete_x", "x", "get_balance", "write_file"),
        fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
        async (tool, annotations) => {
          const bare = await fromCaller.decide({ tool, arguments: {} }, NOW);
          const marked = await fromCaller.decide({ tool, arguments: {}, annotations }, NOW);
          expect(routeStrictness(marked.route)).toBeGreaterThanOrEqual(routeStrictness(bare.route));
        },
      ),
      { numRuns: 200 },
    );
  });
});
