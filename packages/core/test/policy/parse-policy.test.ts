import { describe, expect, it } from "vitest";
import { assertPolicy, parsePolicy, ValidationError, type Policy } from "@acp/core";

/** Parses text that must be valid and returns the policy. */
function valid(text: string): Policy {
  const result = parsePolicy(text);
  if (!result.ok) throw new Error(`expected a valid policy, got: ${JSON.stringify(result.issues)}`);
  return result.value;
}

describe("parsePolicy: the consent protocol §5.1 format", () => {
  it("reads the specification's own example, made concrete, into the model", () => {
    const policy = valid(`version: "1"
default_action: ask

rules:
  - match:
      tool: "send_*"                 # Tool name or pattern
      category: "communication"      # Action category
      server: "gmail"                # MCP server name
      args:                          # Argument matching
        to: "*@example.com"
    action: ask
    level: high                      # For "ask" actions
    timeout: 300                     # Seconds before auto-deny
    rate_limit: "20/minute"          # Rate limiting
    conditions:
      time_of_day:
        after: "09:00"
        before: "17:00"
        timezone: "UTC"
`);
    expect(policy).toEqual({
      version: "1",
      default_action: "ask",
      classify: [],
      rules: [
        {
          id: "rule-1",
          index: 0,
          line: 5,
          match: { tool: "send_*", category: "communication", server: "gmail", args: { to: "*@example.com" } },
          action: "ask",
          level: "high",
          timeout: 300,
          rate_limit: { count: 20, unit: "minute", windowMs: 60_000, text: "20/minute" },
          conditions: { time_of_day: { after: "09:00", before: "17:00", timezone: "UTC" } },
        },
      ],
    });
  });

  it("defaults default_action to ask, the safe choice, and accepts the number 1 as version", () => {
    const policy = valid("version: 1\nrules: []\n");
    expect(policy.default_action).toBe("ask");
    expect(policy.version).toBe("1");
    expect(policy.rules).toEqual([]);
  });

  it("keeps rules in file order and names each by its id or its 1-based position", () => {
    const policy = valid(`version: "1"
default_action: deny
rules:
  - id: read-anything
    description: reading is harmless
    match: { tool: "read_*" }
    action: allow
  - match: { tool: "delete_*" }
    action: deny
  - id: mail_2
    action: ask
`);
    expect(policy.rules.map((r) => [r.id, r.index, r.line, r.action])).toEqual([
      ["read-anything", 0, 4, "allow"],
      ["rule-2", 1, 8, "deny"],
      ["mail_2", 2, 10, "ask"],
    ]);
    expect(policy.rules[0]?.description).toBe("reading is harmless");
  });

  it("reads a missing, empty or null match as matching everything", () => {
    const policy = valid(`version: "1"
rules:
  - action: deny
  - match: {}
    action: deny
  - match:
    action: deny
`);
    expect(policy.rules.map((r) => r.match)).toEqual([{}, {}, {}]);
  });

  it("reads `rules:` and `classify:` with nothing after them as empty lists", () => {
    const policy = valid('version: "1"\nrules:\nclassify:\n');
    expect(policy.rules).toEqual([]);
    expect(policy.classify).toEqual([]);
  });

  it("reads args by dotted path with exact scalars and globs", () => {
    const policy = valid(`version: "1"
rules:
  - match:
      tool: send_email
      args:
        to.address: "*@corp.com"
        priority: 3
        urgent: true
        cc: null
        subject: "draft-[0-9]*"
    action: allow
`);
    expect(policy.rules[0]?.match.args).toEqual({
      "to.address": "*@corp.com",
      priority: 3,
      urgent: true,
      cc: null,
      subject: "draft-[0-9]*",
    });
  });

  it("accepts time windows that cross midnight, one-sided windows, other zones and 24:00 as the end of day", () => {
    const policy = valid(`version: "1"
rules:
  - action: deny
    conditions: { time_of_day: { after: "22:00", before: "06:00", timezone: Europe/Paris } }
  - action: deny
    conditions: { time_of_day: { after: "18:30" } }
  - action: deny
    conditions: { time_of_day: { before: 08:00 } }
  - action: deny
    conditions: { time_of_day: { after: "20:00", before: "24:00" } }
`);
    expect(policy.rules.map((r) => r.conditions?.time_of_day)).toEqual([
      { after: "22:00", before: "06:00", timezone: "Europe/Paris" },
      { after: "18:30", timezone: "UTC" },
      { before: "08:00", timezone: "UTC" },
      { after: "20:00", before: "24:00", timezone: "UTC" },
    ]);
  });

  it("reads every rate-limit unit", () => {
    const policy = valid(`version: "1"
rules:
  - { action: allow, rate_limit: 1/second }
  - { action: allow, rate_limit: 20/minute }
  - { action: allow, rate_limit: 100/hour }
  - { action: allow, rate_limit: 1000/day }
`);
    expect(policy.rules.map((r) => [r.rate_limit?.count, r.rate_limit?.unit, r.rate_limit?.windowMs])).toEqual([
      [1, "second", 1_000],
      [20, "minute", 60_000],
      [100, "hour", 3_600_000],
      [1000, "day", 86_400_000],
    ]);
  });

  it("reads the classify section that overrides the built-in classification", () => {
    const policy = valid(`version: "1"
classify:
  - tool: "fetch_*"
    category: read
    risk_level: low
  - tool: wire_money
    server: "bank-*"
    risk_level: critical
`);
    expect(policy.classify).toEqual([
      { tool: "fetch_*", category: "read", risk_level: "low" },
      { tool: "wire_money", server: "bank-*", risk_level: "critical" },
    ]);
  });

  it("resolves YAML anchors and aliases for shared pieces", () => {
    const policy = valid(`version: "1"
rules:
  - id: office-hours-mail
    match: &mail { tool: "send_*", category: communication }
    action: allow
    conditions: { time_of_day: &office { after: "09:00", before: "17:00" } }
  - id: other-mail
    match: *mail
    action: ask
    conditions: { time_of_day: *office }
`);
    expect(policy.rules[1]?.match).toEqual({ tool: "send_*", category: "communication" });
    expect(policy.rules[1]?.conditions?.time_of_day).toEqual({ after: "09:00", before: "17:00", timezone: "UTC" });
  });

  it("ignores a byte-order mark and a leading document marker", () => {
    expect(valid('\uFEFF---\nversion: "1"\n').version).toBe("1");
  });

  it("returns a deeply frozen policy that nothing downstream can mutate", () => {
    const policy = valid(`version: "1"
rules:
  - match: { args: { path: "/tmp/*" } }
    action: allow
    rate_limit: 5/minute
    conditions: { time_of_day: { after: "09:00" } }
classify:
  - { tool: "x_*", category: read }
`);
    const rule = policy.rules[0];
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.rules)).toBe(true);
    expect(Object.isFrozen(rule)).toBe(true);
    expect(Object.isFrozen(rule?.match)).toBe(true);
    expect(Object.isFrozen(rule?.match.args)).toBe(true);
    expect(Object.isFrozen(rule?.rate_limit)).toBe(true);
    expect(Object.isFrozen(rule?.conditions?.time_of_day)).toBe(true);
    expect(Object.isFrozen(policy.classify[0])).toBe(true);
    expect(() => {
      (policy.rules as unknown as unknown[]).push({});
    }).toThrow(TypeError);
  });
});

describe("assertPolicy", () => {
  it("returns the policy when it is valid", () => {
    expect(assertPolicy('version: "1"\ndefault_action: deny\n').default_action).toBe("deny");
  });

  it("throws a ValidationError that carries every issue and names the file", () => {
    let caught: unknown;
    try {
      assertPolicy('version: "1"\ndefault_action: alow\nrulez: []\n', { file: "policy.yml" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(error.issues.map((i) => i.code)).toEqual(["unknown_action", "unknown_key"]);
    expect(error.message).toContain("invalid policy `policy.yml`");
  });
});
