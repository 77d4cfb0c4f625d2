/**
 * One decision has a deterministic work budget (DECISION_WORK_BUDGET units: argument values visited,
 * characters read by the rules' tests, steps of the linear-time matcher), and one request a size limit
 * (REQUEST_LIMITS): hostile arguments (deep nesting, 100,000 keys, huge arrays, huge strings) are refused
 * with a stable reason, never judged for seconds.
 */
import { describe, expect, it } from "vitest";
import {
  DECISION_WORK_BUDGET,
  REQUEST_LIMITS,
  assertPolicy,
  compilePolicy,
  createPipeline,
  policySource,
  spendWork,
  withWorkBudget,
  WorkBudgetExceededError,
  type Decision,
} from "../../src/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function pipelineOf(rules: string, defaultAction = "allow") {
  const policy = assertPolicy(`version: "1"\ndefault_action: ${defaultAction}\nrules:\n${rules}`);
  return createPipeline([policySource(compilePolicy(policy))]);
}

/** `count` deny rules on argument `key`, each a glob only the linear-time matcher runs. */
function denyRules(count: number, key: string): string {
  let out = "";
  for (let i = 0; i < count; i++) {
    out += `  - { id: d${i}, match: { args: { ${key}: "*a*a*a*b${i}" } }, action: deny }\n`;
  }
  return out;
}

function codes(decision: Decision): string[] {
  return decision.reasons.map((r) => r.code);
}

describe("a decision's work budget", () => {
  it("refuses a huge array that rules would test element by element", async () => {
    const decide = pipelineOf(denyRules(40, "to"));
    const to = Array.from({ length: 99_000 }, (_, i) => `user${i}@aaaa.example`);
    const decision = await decide.decide({ tool: "send_email", arguments: { to } }, NOW);
    expect(decision.route).toBe("refuse");
    expect(codes(decision)).toEqual(["decision_budget_exceeded"]);
    expect(decision.reasons[0]?.message).toMatch(/too costly to judge: .*work units/);
  });

  it("refuses a huge string that a regular-expression-shaped glob would read for too long", async () => {
    const decide = pipelineOf(denyRules(1, "body"));
    // it holds the glob's literal text (`b0`), so the matcher must run over all of it
    const body = `b0${"a".repeat(REQUEST_LIMITS.maxStringLength - 2)}`;
    const decision = await decide.decide({ tool: "send_email", arguments: { body } }, NOW);
    expect(codes(decision)).toEqual(["decision_budget_exceeded"]);
  });

  it("judges a huge string without the glob's literal text with no run of the matcher", async () => {
    const decide = pipelineOf(denyRules(40, "body"));
    const body = "a".repeat(REQUEST_LIMITS.maxStringLength);
    expect((await decide.decide({ tool: "send_email", arguments: { body } }, NOW)).route).toBe("accept");
  });

  it("judges a 1,000,000-character file under twenty content rules, each literal searched for in one pass", async () => {
    const globs = [
      "*BEGIN*PRIVATE KEY*",
      "*AKIA*",
      "*ghp_*",
      "*xoxb-*",
      "*rm -rf*",
      "*curl*sh*",
      "*password=*",
      "*api_key*",
      "*secret_key*",
      "*aws_secret_access_key*",
      "*PRIVATE KEY-----*",
      "*eval\\(*",
      "*base64 -d*",
      "*/etc/shadow*",
      "*chmod 777*",
      "*sudo *",
      "*DROP TABLE*",
      "*nc -e*",
      "*mkfifo*",
      "*.ssh/id_*",
    ];
    const rules = globs.map(
      (g, i) =>
        `  - { id: c${i}, match: { tool: write_file, args: { content: ${JSON.stringify(g)} } }, action: deny }\n`,
    );
    const decide = pipelineOf(rules.join(""));
    const line = "export function handler(request, response) { return response.send(request.body.value + 1); }\n";
    const content = line.repeat(Math.ceil(REQUEST_LIMITS.maxStringLength / line.length)).slice(0, 1_000_000);
    const write = await decide.decide({ tool: "write_file", arguments: { path: "/srv/app.js", content } }, NOW);
    expect([write.route, codes(write)]).toEqual(["accept", ["default_action"]]);
    // and the same content with a key in it is still refused by its rule
    const pem = "-----BEGIN PRIVATE KEY-----";
    const key = `${content.slice(0, 500_000)}${pem}${content.slice(500_000 + pem.length)}`;
    const refused = await decide.decide({ tool: "write_file", arguments: { path: "/srv/app.js", content: key } }, NOW);
    expect([refused.route, refused.rule]).toEqual(["refuse", "policy:c0"]);
  });

  it("judges a huge string that rules with literal text read, and a normal request as before", async () => {
    let rules = "";
    for (let i = 0; i < 12; i++)
      rules += `  - { id: k${i}, match: { args: { body: "*BEGIN*PRIVATE KEY ${i}*" } }, action: deny }\n`;
    const decide = pipelineOf(rules);
    const body = "The quick brown fox jumps over the lazy dog, see /srv//x. ".repeat(17_000);
    expect((await decide.decide({ tool: "write_file", arguments: { body } }, NOW)).route).toBe("accept");
    const key = await decide.decide({ tool: "write_file", arguments: { body: "-----BEGIN PRIVATE KEY 3-----" } }, NOW);
    expect(key.rule).toBe("policy:k3");
  });

  it("judges 100,000 keys a rule does not walk without spending the budget", async () => {
    const decide = pipelineOf(denyRules(40, "target"));
    const args: Record<string, string> = {};
    for (let i = 0; i < REQUEST_LIMITS.maxNodes - 2; i++) args[`k${i}`] = "x";
    args["target"] = "aaab7";
    expect((await decide.decide({ tool: "t", arguments: args }, NOW)).rule).toBe("policy:d7");
    delete args["target"];
    args[`k${REQUEST_LIMITS.maxNodes}`] = "x";
    args[`k${REQUEST_LIMITS.maxNodes + 1}`] = "x";
    const over = await decide.decide({ tool: "t", arguments: args }, NOW);
    expect([over.route, codes(over)]).toEqual(["refuse", ["request_too_large"]]);
  });

  it("refuses arguments nested too deep, before any rule reads them", async () => {
    const decide = pipelineOf(denyRules(1, "a"));
    let deep: unknown = "x";
    for (let i = 0; i < REQUEST_LIMITS.maxDepth + 1; i++) deep = { a: deep };
    const decision = await decide.decide({ tool: "t", arguments: deep }, NOW);
    expect([decision.route, codes(decision)]).toEqual(["refuse", ["request_too_large"]]);
    expect(decision.reasons[0]?.message).toMatch(/nest deeper than 64/);
  });

  it("refuses more than 16 Mi characters of arguments in all", async () => {
    const decide = pipelineOf("  - { id: r, action: allow }\n");
    const chunk = "x".repeat(REQUEST_LIMITS.maxStringLength);
    const many = Array.from({ length: 17 }, () => chunk);
    const decision = await decide.decide({ tool: "t", arguments: { many } }, NOW);
    expect([decision.route, codes(decision)]).toEqual(["refuse", ["request_too_large"]]);
    expect(decision.reasons[0]?.message).toMatch(/more than 16,777,216 characters in all/);
  });

  it("counts deterministically: the same request spends the same units", () => {
    const spent = (units: number): number => {
      let used = 0;
      try {
        withWorkBudget(units, () => {
          for (;;) {
            spendWork(7);
            used += 7;
          }
        });
      } catch (err) {
        expect(err).toBeInstanceOf(WorkBudgetExceededError);
      }
      return used;
    };
    expect(spent(100)).toBe(98);
    expect(spent(100)).toBe(98);
    expect(DECISION_WORK_BUDGET).toBeGreaterThan(1_000_000);
  });
});
