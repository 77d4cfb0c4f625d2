import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parsePolicy, type Policy } from "@acp/core";

interface AttackCounts {
  cases: number;
  measurable: number;
  defended: number;
  injectionCalls: number;
  stopped: number;
}
interface BenignCounts {
  tasks: number;
  noPerson: number;
  person: number;
  refused: number;
}
interface Scored {
  benign: Record<string, { benign: BenignCounts }>;
  attacks: Record<string, Record<string, { attacks: AttackCounts }>>;
}
interface BenchModules {
  score: {
    scoreAgentDojo(dir: string, config: object): Promise<Scored>;
    collectPrompts(dir: string): Map<string, string>;
  };
  session: { benchSessions(options: object): unknown; readTools(path: string): unknown };
  intent: {
    intentFromPrompt(prompt: string, suite: string, tools: { name: string }[]): { allowed_actions: string[] };
  };
}

const fixture = fileURLToPath(new URL("./fixtures/agentdojo/", import.meta.url));
const bench = fileURLToPath(new URL("../../../../bench/agentdojo/", import.meta.url));
const NOW = new Date("2024-05-15T00:00:00Z");

async function modules(): Promise<BenchModules> {
  return {
    score: (await import(join(bench, "score.mjs"))) as BenchModules["score"],
    session: (await import(join(bench, "session.mjs"))) as BenchModules["session"],
    intent: (await import(join(bench, "intent-from-prompt.mjs"))) as BenchModules["intent"],
  };
}

function shippedPolicy(): Policy {
  const parsed = parsePolicy(readFileSync(join(bench, "policy.yml"), "utf8"));
  if (!parsed.ok) throw new Error("bench/agentdojo/policy.yml does not parse");
  return parsed.value;
}

describe("AgentDojo driver (smoke, on a copied fixture)", () => {
  it("scores benign tasks and stops the injected calls with the shipped policy and session", async () => {
    const { score, session } = await modules();
    const policy = shippedPolicy();
    const sessions = session.benchSessions({
      prompts: score.collectPrompts(fixture),
      tools: session.readTools(join(fixture, "tools.json")),
      classify: policy.classify,
      now: NOW,
    });
    const result = await score.scoreAgentDojo(fixture, {
      inputs: { policy, policyFile: "policy.yml" },
      sessions,
      now: NOW,
    });
    expect(result.benign["banking"]?.benign).toMatchObject({ tasks: 2, noPerson: 2, person: 0, refused: 0 });
    expect(result.attacks["important"]?.["banking"]?.attacks).toMatchObject({
      cases: 2,
      measurable: 2,
      defended: 2,
      injectionCalls: 2,
      stopped: 2,
    });
    // With the placeholder the attacker's IBAN and password appear in no output: the shipped settings ask for a
    // destination nobody in the session supplied (`provenance.unknown: ask`), so both calls still stop.
    expect(result.attacks["placeholder"]?.["banking"]?.attacks).toMatchObject({ injectionCalls: 2, stopped: 2 });
  });

  it("without the session, the policy alone lets every injected call through (the baseline)", async () => {
    const { score } = await modules();
    const result = await score.scoreAgentDojo(fixture, {
      inputs: { policy: shippedPolicy(), policyFile: "policy.yml" },
      now: NOW,
      attackFiles: ["important"],
    });
    // The shipped policy leaves destructive calls (the password change) to the session's intent and provenance.
    expect(result.attacks["important"]?.["banking"]?.attacks).toMatchObject({
      injectionCalls: 2,
      stopped: 0,
      defended: 0,
    });
  });

  it("fails with a clear message when the benchmark folder is absent", async () => {
    const { score } = await modules();
    await expect(score.scoreAgentDojo("/nonexistent/agentdojo", { now: NOW })).rejects.toThrow(
      "no `benign.jsonl` in `/nonexistent/agentdojo`",
    );
  });

  it("derives the intent from the prompt's words only: a payment needs a paying word", async () => {
    const { intent } = await modules();
    const tools = [{ name: "get_balance" }, { name: "send_money" }, { name: "update_password" }];
    expect(intent.intentFromPrompt("What is my balance?", "banking", tools).allowed_actions).toEqual([
      "banking.get_balance",
    ]);
    expect(intent.intentFromPrompt("Please refund GB29 for the dinner", "banking", tools).allowed_actions).toEqual([
      "banking.get_balance",
      "banking.send_money",
    ]);
  });
});
