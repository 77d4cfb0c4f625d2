import { describe, expect, it } from "vitest";
import { assertPolicy, findIneffectiveKeys } from "../../src/policy/index.js";

describe("findIneffectiveKeys", () => {
  it("points at a deny rule's rate limit and at a timeout or level on a rule that does not ask", () => {
    const policy = assertPolicy(`
version: "1"
rules:
  - id: mail-cap
    match: { tool: send_email }
    action: deny
    rate_limit: "10/hour"
  - id: reads
    match: { category: read }
    action: allow
    timeout: 60
    level: low
  - id: asks
    match: { category: write }
    action: ask
    timeout: 60
    level: high
    rate_limit: "5/minute"
`);
    const issues = findIneffectiveKeys(policy.rules);
    expect(issues.map((i) => [i.code, i.path.join("."), i.line])).toEqual([
      ["ineffective_key", "rules.0.rate_limit", 4],
      ["ineffective_key", "rules.1.timeout", 8],
      ["ineffective_key", "rules.1.level", 8],
    ]);
    expect(issues[0]?.message).toBe(
      "rule `mail-cap`: `rate_limit` does nothing on a `deny` rule: every call it matches is refused, none counted",
    );
    expect(issues[0]?.help).toBe(
      "to let `10/hour` through and refuse the rest, write `action: allow` (or `ask`) with the limit",
    );
  });
});
