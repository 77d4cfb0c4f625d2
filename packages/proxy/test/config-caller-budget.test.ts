/**
 * `proxy.caller_budget`: each agent's share of the proxy's policy work (`units` spent at once, back over
 * `seconds`), checked as every `proxy:` key is: whole numbers in range, unknown keys refused with a guess.
 */
import { describe, expect, it } from "vitest";
import { parseProxyConfig } from "../src/config/proxy-config.js";

describe("proxy.caller_budget", () => {
  it("takes units and seconds (seconds as windowMs), each alone too, and nothing for absent", () => {
    const both = parseProxyConfig({ caller_budget: { units: 67_108_864, seconds: 120 } });
    expect(both.ok && both.value.callerBudget).toEqual({ units: 67_108_864, windowMs: 120_000 });
    const one = parseProxyConfig({ caller_budget: { seconds: 30 } });
    expect(one.ok && one.value.callerBudget).toEqual({ windowMs: 30_000 });
    const none = parseProxyConfig({});
    expect(none.ok && none.value.callerBudget).toBeUndefined();
  });

  it("refuses values out of range, an unknown key and a scalar, each at its path", () => {
    const bad = parseProxyConfig({ caller_budget: { units: 0, seconds: 86_401, unit: 5 } });
    expect(bad.ok ? [] : bad.issues).toEqual([
      {
        code: "proxy_config_invalid",
        path: ["proxy", "caller_budget", "units"],
        message: "`proxy.caller_budget.units` must be a whole number of work units from 1 to 1,125,899,906,842,624",
      },
      {
        code: "proxy_config_invalid",
        path: ["proxy", "caller_budget", "seconds"],
        message: "`proxy.caller_budget.seconds` must be a whole number of seconds from 1 to 86,400",
      },
      {
        code: "proxy_config_unknown_key",
        path: ["proxy", "caller_budget", "unit"],
        message: "unknown key `unit` in `proxy.caller_budget` (did you mean `units`?)",
      },
    ]);
    for (const value of [5, "60", [1]]) {
      const r = parseProxyConfig({ caller_budget: value });
      expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual([
        "`proxy.caller_budget` must be a mapping (of units, seconds)",
      ]);
    }
    const fraction = parseProxyConfig({ caller_budget: { units: 1.5 } });
    expect(fraction.ok).toBe(false);
  });
});
