/**
 * `serve.caller_budget`: each caller's share of a node's policy work (`units` spent at once, back over
 * `seconds`), checked as every `serve:` key is: unknown keys and bad values stop `acp serve` (exit 4).
 */
import { describe, expect, it } from "vitest";
import { checkServeConfig } from "../src/wiring/serve-config.js";

describe("serve.caller_budget", () => {
  it("takes units and seconds, each alone too", () => {
    expect(checkServeConfig({ serve: { caller_budget: { units: 67_108_864, seconds: 120 } } })).toEqual({
      ok: true,
      value: { callerBudget: { units: 67_108_864, windowMs: 120_000 } },
    });
    expect(checkServeConfig({ serve: { caller_budget: { seconds: "30" } } })).toEqual({
      ok: true,
      value: { callerBudget: { windowMs: 30_000 } },
    });
    expect(checkServeConfig({ serve: { caller_budget: null } })).toEqual({ ok: true, value: {} });
  });

  it("refuses a value that is no positive whole number in range, an unknown key and a scalar", () => {
    const checked = checkServeConfig({
      serve: { caller_budget: { units: 0, seconds: 1.5, unit: 5 } },
    });
    expect(checked).toEqual({
      ok: false,
      problems: [
        "serve.caller_budget.units: `0` is not a number of work units (a whole number from 1 to 1,125,899,906,842,624)",
        "serve.caller_budget.seconds: `1.5` is not a number of seconds (a whole number from 1 to 86,400)",
        "serve.caller_budget.unit: unknown key (did you mean `serve.caller_budget.units`?)",
      ],
    });
    const more = checkServeConfig({ serve: { caller_budget: { units: "lots", seconds: 86_401 } } });
    expect(more.ok ? [] : more.problems).toEqual([
      "serve.caller_budget.units: `lots` is not a number of work units (a whole number from 1 to 1,125,899,906,842,624)",
      "serve.caller_budget.seconds: `86401` is not a number of seconds (a whole number from 1 to 86,400)",
    ]);
    const scalar = checkServeConfig({ serve: { caller_budget: 5 } });
    expect(scalar.ok ? [] : scalar.problems).toEqual(["serve.caller_budget: must be a mapping (of units, seconds)"]);
    const typo = checkServeConfig({ serve: { caller_budgte: {} } });
    expect(typo.ok ? [] : typo.problems).toEqual([
      "serve.caller_budgte: unknown key (did you mean `serve.caller_budget`?)",
    ]);
  });
});
