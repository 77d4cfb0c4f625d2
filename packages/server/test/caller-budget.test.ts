/**
 * Each caller's share of a node's policy work (`serve.caller_budget`): one decision may spend the whole work
 * budget before it is refused, and one thread decides for every caller, so a caller that has spent its share
 * is refused at once, unjudged (`caller_budget_exhausted`, naming when to try again), while every other
 * caller is still judged; its share comes back over the window.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compilePolicy,
  createCallerBudget,
  createPipeline,
  DECISION_WORK_BUDGET,
  decideWithin,
  EXHAUSTED_CHARGE,
  parsePolicy,
  policySource,
  policyWorkOf,
  type Decision,
  type Pipeline,
} from "@acp/core";
import { anyServerPipelineOf, anyServerPolicy, type EmbeddedServer, type ServerReadingInputs } from "@acp/server";
import { at, openTestServerAt, pipelineFor, READ_EVENT, readJson } from "./harness.js";

/** A `deny` rule whose glob has no literal run a string search answers alone: a hostile body costs the whole budget. */
const POLICY = `version: "1"
default_action: allow
rules:
  - { id: costly, match: { tool: send_email, args: { body: "*a*a*a*b0" } }, action: deny }
  - { id: secrets, match: { tool: write_file, args: { content: "*BEGIN*PRIVATE KEY*" } }, action: deny }
`;

/** A body the rule's matcher must read whole: it holds the glob's literal text (`b0`), then a megabyte. */
const HOSTILE = { tool: "send_email", arguments: { body: `b0${"a".repeat(999_998)}` } };
const NORMAL = { tool: "read_file", arguments: { path: "/srv/notes.txt" } };

const T0 = Date.parse("2026-03-02T10:00:00Z");

function codes(decision: Decision): string[] {
  return decision.reasons.map((r) => r.code);
}

describe("a caller's share of the policy work", () => {
  // a write whose content the `secrets` rule reads: about one unit per two characters
  const pipeline = pipelineFor(POLICY);
  const write = { tool: "write_file", arguments: { path: "/srv/a.js", content: "x".repeat(2000) } };
  let cost = 0;
  beforeAll(async () => {
    await pipeline.decide(write, new Date(T0)); // the first decision of a pipeline may cost a unit more
    cost = policyWorkOf(await pipeline.decide(write, new Date(T0)))?.units ?? 0;
  });

  it("charges what each decision spent, refuses once it is spent and takes it back over the window", async () => {
    expect(cost).toBeGreaterThan(100);
    let now = T0;
    const clock = (): Date => new Date(now);
    const budget = createCallerBudget({ units: 3 * cost, windowMs: 60_000 });
    const decide = (caller: string | undefined): Promise<Decision> =>
      decideWithin(budget, caller, clock, () => pipeline.decide(write, clock()));
    for (let i = 0; i < 3; i++) expect((await decide("ci_bot")).route).toBe("accept");
    const refused = await decide("ci_bot");
    expect([refused.route, codes(refused)]).toEqual(["refuse", ["caller_budget_exhausted"]]);
    // judged by nobody: no source's verdict, only the refusal
    expect(refused.verdicts.map((v) => v.source)).toEqual(["pipeline"]);
    expect(refused.reasons[0]?.message).toMatch(/^agent `ci_bot` has spent its share .* try again in 1 s$/);
    // another named agent, and the callers without one, have shares of their own
    expect((await decide("support")).route).toBe("accept");
    expect((await decide(undefined)).route).toBe("accept");
    // a third of the window gives back a third of the share: one more decision
    now += 20_000;
    expect((await decide("ci_bot")).route).toBe("accept");
    expect(codes(await decide("ci_bot"))).toEqual(["caller_budget_exhausted"]);
    // a whole window gives it back whole
    now += 60_000;
    for (let i = 0; i < 3; i++) expect((await decide("ci_bot")).route).toBe("accept");
    expect(codes(await decide("ci_bot"))).toEqual(["caller_budget_exhausted"]);
  });

  it("gives the callers whose token names no agent one share together", async () => {
    const budget = createCallerBudget({ units: cost, windowMs: 60_000 });
    const clock = (): Date => new Date(T0);
    expect((await decideWithin(budget, undefined, clock, () => pipeline.decide(write, clock()))).route).toBe("accept");
    const next = await decideWithin(budget, undefined, clock, () => pipeline.decide(write, clock()));
    expect(codes(next)).toEqual(["caller_budget_exhausted"]);
    expect(next.reasons[0]?.message).toMatch(/^the callers whose token names no agent \(they share one allowance\)/);
  });

  it("charges nothing for a decision no policy judged, and forgets callers whose share is whole again", async () => {
    const budget = createCallerBudget({ units: cost, windowMs: 1000, maxCallers: 2 });
    const clock = (): Date => new Date(T0);
    // refused before any source judged it (no tool): no policy work, nothing charged
    for (let i = 0; i < 3; i++) {
      const invalid = await decideWithin(budget, "a", clock, () => pipeline.decide({ arguments: {} }, clock()));
      expect(codes(invalid)).toEqual(["invalid_request"]);
    }
    expect(budget.size()).toBe(0);
    await decideWithin(budget, "a", clock, () => pipeline.decide(write, clock()));
    await decideWithin(budget, "b", clock, () => pipeline.decide(write, clock()));
    expect(budget.size()).toBe(2);
    // the table is full, and both debts are live: a third caller is refused rather than one forgotten
    const third = budget.admit("c", T0);
    expect(third === null ? null : codes(third)).toEqual(["caller_budget_exhausted"]);
    expect(third?.reasons[0]?.message).toMatch(/^too many callers are being counted \(at most 2\)/);
    // once their shares are whole again they are forgotten, and the new caller is counted
    expect(budget.admit("c", T0 + 1000)).toBeNull();
    expect(budget.size()).toBe(0);
  });

  it("charges every reading of a caller's server judged for one answer, not only the one answered", async () => {
    const text = `${POLICY}classify:\n  - { tool: export_report, server: payments, category: financial }\n`;
    const parsed = parsePolicy(text, { file: "policy.yml" });
    if (!parsed.ok) throw new Error("policy");
    const build = (inputs: ServerReadingInputs): Pipeline =>
      createPipeline([policySource(compilePolicy(inputs.policy))], { classify: inputs.policy.classify });
    // judged as named, as no server and as `payments`: three decisions, one answer
    const readings = anyServerPipelineOf(parsed.value, undefined, build);
    const single = build({ policy: anyServerPolicy(parsed.value), mapping: undefined });
    const one = async (pipeline: Pipeline): Promise<number> => {
      await pipeline.decide(write, new Date(T0)); // the first decision of a pipeline may cost a unit more
      return policyWorkOf(await pipeline.decide(write, new Date(T0)))?.units ?? 0;
    };
    const alone = await one(single);
    expect(alone).toBeGreaterThan(100);
    expect(await one(readings)).toBe(3 * alone);
  });

  it("refuses a share that is not a positive whole number", () => {
    for (const bad of [{ units: 0 }, { units: 1.5 }, { windowMs: -1 }, { windowMs: Number.NaN }, { maxCallers: 0 }]) {
      expect(() => createCallerBudget(bad)).toThrow(RangeError);
    }
  });
});

describe("acp serve with caller shares", () => {
  const HOSTILE_TOKEN = "hostile-agent-token-0123456789";
  const OTHER_TOKEN = "other-agent-token-0123456789ab";
  const ANON_TOKEN = "anonymous-agents-token-0123456";
  let home: string;
  let node: EmbeddedServer;
  let url: string;
  let now = T0;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "acp-caller-budget-"));
    ({ node, url } = await openTestServerAt(home, {
      pipeline: pipelineFor(POLICY),
      simulationPipeline: pipelineFor(POLICY),
      clock: () => new Date(now),
      token: ANON_TOKEN,
      agentTokens: { hostile: HOSTILE_TOKEN, other: OTHER_TOKEN },
      // one whole decision budget a minute: a request that exhausts it (charged twice that) overdraws a minute
      callerBudget: { units: DECISION_WORK_BUDGET, windowMs: 60_000 },
    }));
  });
  afterAll(async () => {
    await node.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** The `Retry-After` of the last answer of {@link decide} (null: none). */
  let retryAfter: string | null = null;
  async function decide(token: string, body: unknown): Promise<Decision> {
    const res = await fetch(`${url}/v1/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    retryAfter = res.headers.get("retry-after");
    return at(await readJson(res), "decision") as Decision;
  }

  it("refuses a caller that spent its share on a hostile request at once, and answers the others", async () => {
    expect(EXHAUSTED_CHARGE).toBe(2 * DECISION_WORK_BUDGET);
    expect((await decide(HOSTILE_TOKEN, NORMAL)).route).toBe("accept");
    expect(codes(await decide(HOSTILE_TOKEN, HOSTILE))).toEqual(["decision_budget_exceeded"]);
    // now overdrawn by one budget: refused unjudged, the hostile request and a normal one alike
    for (const body of [HOSTILE, NORMAL]) {
      const refused = await decide(HOSTILE_TOKEN, body);
      expect([refused.route, codes(refused)]).toEqual(["refuse", ["caller_budget_exhausted"]]);
      expect(refused.verdicts.map((v) => v.source)).toEqual(["pipeline"]);
      expect(refused.reasons[0]?.message).toBe(
        "agent `hostile` has spent its share of this process's policy work (8,388,608 work units per 60 s; a request " +
          "too costly to judge counts as 16,777,216): refused without being judged, so the other callers are " +
          "answered; try again in 61 s",
      );
      // the answer stays 200 with the refusal, and says when to come back in the standard header too
      expect(retryAfter).toBe("61");
    }
    // the contract front end (and the MCP tool, which shares it) says the same
    const check = await fetch(`${url}/pre-tool-check`, {
      method: "POST",
      headers: { authorization: `Bearer ${HOSTILE_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(READ_EVENT),
    });
    const envelope = await readJson(check);
    expect([check.status, at(envelope, "decision", "route"), at(envelope, "gate_decision")]).toEqual([
      200,
      "refuse",
      "fail",
    ]);
    expect(at(envelope, "decision", "reasons", 0, "code")).toBe("caller_budget_exhausted");
    expect(check.headers.get("retry-after")).toBe("61");
    // the other agent and the anonymous token's callers are judged as ever
    expect((await decide(OTHER_TOKEN, NORMAL)).route).toBe("accept");
    expect(retryAfter).toBeNull();
    // (naming `hostile` with it is 403 agent_mismatch: only its token speaks for an agent that has one)
    expect((await decide(ANON_TOKEN, { ...NORMAL, agent: "guest" })).route).toBe("accept");
    // the refusals are recorded as every decision is, under the token's agent
    await node.stores.auditLog.flush();
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map(
        (line) =>
          JSON.parse(line) as {
            event_type: string;
            agent: string | null;
            decision?: string;
            metadata?: { reasons?: string[] };
          },
      );
    const refusals = events.filter((e) => e.metadata?.reasons?.includes("pipeline:caller_budget_exhausted") === true);
    expect(refusals.map((e) => [e.event_type, e.agent, e.decision])).toEqual([
      ["policy_evaluated", "hostile", "refuse"],
      ["policy_evaluated", "hostile", "refuse"],
      ["policy_evaluated", "hostile", "refuse"],
    ]);
  });

  it("judges the caller again once its share has come back", async () => {
    now += 60_000; // back to zero: still nothing to spend
    expect(codes(await decide(HOSTILE_TOKEN, NORMAL))).toEqual(["caller_budget_exhausted"]);
    expect(retryAfter).toBe("1");
    now += 1_000;
    expect((await decide(HOSTILE_TOKEN, NORMAL)).route).toBe("accept");
  });
});
