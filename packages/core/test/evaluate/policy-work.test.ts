/**
 * What one policy evaluation spent is kept beside its verdict (`policyWorkOf`), so a front end serving
 * several callers on one thread can charge each for its decisions; `measureWork` counts it.
 */
import { describe, expect, it } from "vitest";
import {
  assertPolicy,
  compilePolicy,
  createPipeline,
  keepPolicyWork,
  measureWork,
  policySource,
  policyWorkOf,
  spendWork,
  withWorkBudget,
  WorkBudgetExceededError,
  type Decision,
} from "../../src/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");

describe("measureWork", () => {
  it("counts what the budgets inside it draw, also when one of them is spent", () => {
    let units = -1;
    const value = measureWork(
      () => withWorkBudget(100, () => (spendWork(30), spendWork(12), "done")),
      (spent) => (units = spent),
    );
    expect([value, units]).toEqual(["done", 42]);
    expect(() =>
      measureWork(
        () => withWorkBudget(10, () => spendWork(11)),
        (spent) => (units = spent),
      ),
    ).toThrow(WorkBudgetExceededError);
    expect(units).toBe(11);
  });

  it("leaves an enclosing budget bounding what it runs, and charges it", () => {
    expect(() =>
      withWorkBudget(10, () =>
        measureWork(
          () => spendWork(11),
          () => undefined,
        ),
      ),
    ).toThrow(WorkBudgetExceededError);
    // the 6 it ran were charged to the enclosing budget: 5 more pass it
    expect(() =>
      withWorkBudget(
        10,
        () => (
          measureWork(
            () => spendWork(6),
            () => undefined,
          ),
          spendWork(5)
        ),
      ),
    ).toThrow(WorkBudgetExceededError);
    expect(
      withWorkBudget(
        10,
        () => (
          measureWork(
            () => spendWork(6),
            () => undefined,
          ),
          spendWork(4),
          "fits"
        ),
      ),
    ).toBe("fits");
  });
});

describe("policyWorkOf", () => {
  const policy = assertPolicy(`version: "1"
default_action: allow
rules:
  - { id: secrets, match: { tool: write_file, args: { content: "*BEGIN*PRIVATE KEY*" } }, action: deny }
`);
  const pipeline = createPipeline([policySource(compilePolicy(policy))]);

  it("names the work of the policy evaluation behind a decision, through copies of the decision", async () => {
    const short = await pipeline.decide({ tool: "write_file", arguments: { content: "x".repeat(100) } }, NOW);
    const long = await pipeline.decide({ tool: "write_file", arguments: { content: "x".repeat(10_000) } }, NOW);
    const shortWork = policyWorkOf(short);
    const named: Decision = { ...long, policy_hash: "sha256:00" }; // as a front end names its policy version
    const longWork = policyWorkOf(named);
    expect(shortWork?.exhausted).toBe(false);
    expect(longWork?.exhausted).toBe(false);
    // reading a hundred times the text costs many times the work
    expect(longWork?.units ?? 0).toBeGreaterThan(20 * (shortWork?.units ?? 0));
  });

  it("sums the work of several decisions made for one answer (keepPolicyWork), through copies of it", async () => {
    const request = { tool: "write_file", arguments: { content: "x".repeat(1000) } };
    const first = await pipeline.decide(request, NOW);
    const second = await pipeline.decide(request, NOW);
    const invalid = await pipeline.decide({ arguments: {} }, NOW);
    const units = (policyWorkOf(first)?.units ?? 0) + (policyWorkOf(second)?.units ?? 0);
    const answer = keepPolicyWork({ ...second, reasons: [] }, [first, invalid, second]);
    const copied: Decision = { ...answer, policy_hash: "sha256:00" };
    expect(policyWorkOf(copied)).toEqual({ units, exhausted: false });
    // decisions without policy work leave the answer as it was
    expect(policyWorkOf(keepPolicyWork(invalid, [invalid]))).toBeUndefined();
  });

  it("is undefined for a decision no policy judged", async () => {
    const invalid = await pipeline.decide({ arguments: {} }, NOW);
    expect(invalid.route).toBe("refuse");
    expect(policyWorkOf(invalid)).toBeUndefined();
    expect(policyWorkOf(await createPipeline([]).decide({ tool: "t", arguments: {} }, NOW))).toBeUndefined();
  });
});
