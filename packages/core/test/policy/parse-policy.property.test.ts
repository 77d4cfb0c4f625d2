import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { stringify } from "yaml";
import {
  CATEGORIES,
  compileGlob,
  MAX_TIMEOUT_SECONDS,
  parsePolicy,
  POLICY_ACTIONS,
  POLICY_ISSUE_CODES,
  RATE_UNIT_MS,
  RATE_UNITS,
  RISK_LEVELS,
  RULE_KEYS,
  type Policy,
  type Result,
} from "@acp/core";

/** The contract `parsePolicy` keeps on any input: a result, well-formed issues, a frozen value. */
function expectWellFormed(result: Result<Policy>): void {
  if (result.ok) {
    expect(Object.isFrozen(result.value)).toBe(true);
    expect(Object.isFrozen(result.value.rules)).toBe(true);
    return;
  }
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) {
    expect(POLICY_ISSUE_CODES).toContain(issue.code);
    expect(Number.isInteger(issue.line) && (issue.line ?? 0) >= 1).toBe(true);
    expect(Number.isInteger(issue.column) && (issue.column ?? 0) >= 1).toBe(true);
    expect(issue.message).not.toMatch(/\n/);
    expect(issue.message.length).toBeGreaterThan(0);
  }
}

const YAML_PIECES = [
  "version",
  "default_action",
  "rules",
  "classify",
  "match",
  "tool",
  "args",
  "action",
  "allow",
  "deny",
  "ask",
  "conditions",
  "time_of_day",
  "after",
  "before",
  "timezone",
  "rate_limit",
  "20/minute",
  "09:00",
  "id",
  ":",
  ": ",
  " ",
  "  ",
  "\n",
  "- ",
  "-",
  "[",
  "]",
  "{",
  "}",
  ",",
  "&a ",
  "*a",
  "'",
  '"',
  "#",
  "?",
  "|",
  ">",
  "!!str ",
  "!x ",
  "---",
  "...",
  "%YAML 1.2",
  "\t",
  "~",
  "null",
  "1",
  "\\",
  "<<: ",
  "\uFEFF",
];

describe("parsePolicy never throws", () => {
  it("on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => expectWellFormed(parsePolicy(text))),
      { numRuns: 200 },
    );
  });

  it("on YAML-shaped token soup", () => {
    const soup = fc.array(fc.constantFrom(...YAML_PIECES), { maxLength: 60 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(soup, (text) => expectWellFormed(parsePolicy(text))),
      { numRuns: 500 },
    );
  });

  it("on arbitrary JSON-ish values dumped as YAML", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => expectWellFormed(parsePolicy(stringify(value)))),
      { numRuns: 200 },
    );
  });

  it("on policy-shaped objects with wrong values in every place", () => {
    const key = fc.constantFrom(...RULE_KEYS, "acton", "tool", "match");
    const garbage = fc.record(
      {
        version: fc.jsonValue({ maxDepth: 2 }),
        default_action: fc.oneof(fc.constantFrom(...POLICY_ACTIONS, "alow"), fc.jsonValue({ maxDepth: 1 })),
        rules: fc.array(fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), { maxLength: 5 }),
        classify: fc.array(
          fc.dictionary(fc.constantFrom("tool", "category", "risk_level", "level"), fc.jsonValue({ maxDepth: 2 })),
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(garbage, (value) => expectWellFormed(parsePolicy(stringify(value)))),
      { numRuns: 150 },
    );
  });
});

// ---- generated valid policies round-trip through yaml.stringify ----

const glob = fc.stringMatching(/^[a-z_*?.-]{1,12}$/).filter((p) => compileGlob(p).ok);
const slug = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/).filter((s) => !/^rule-[0-9]+$/.test(s));
const argKey = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}(\.[a-z][a-z0-9_]{0,6}){0,2}$/);
const argValue = fc.oneof(
  glob,
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
);
const clock = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`);
const timeOfDay = fc
  .record(
    {
      after: clock,
      before: fc.oneof(clock, fc.constant("24:00")),
      timezone: fc.constantFrom("UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata"),
    },
    { requiredKeys: [] },
  )
  .filter((t) => (t.after !== undefined || t.before !== undefined) && t.after !== t.before);
const ruleInput = fc.record(
  {
    id: slug,
    description: fc.string({ unit: "grapheme", maxLength: 30 }),
    match: fc.record(
      {
        tool: glob,
        category: fc.constantFrom(...CATEGORIES),
        server: glob,
        args: fc.dictionary(argKey, argValue, { maxKeys: 4 }),
      },
      { requiredKeys: [] },
    ),
    action: fc.constantFrom(...POLICY_ACTIONS),
    level: fc.constantFrom(...RISK_LEVELS),
    timeout: fc.integer({ min: 1, max: MAX_TIMEOUT_SECONDS }),
    rate: fc.tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(...RATE_UNITS)),
    time: timeOfDay,
  },
  { requiredKeys: ["action"] },
);
const classifyEntry = fc
  .record(
    {
      tool: glob,
      server: glob,
      category: fc.constantFrom(...CATEGORIES),
      risk_level: fc.constantFrom(...RISK_LEVELS),
    },
    { requiredKeys: ["tool"] },
  )
  .filter((c) => c.category !== undefined || c.risk_level !== undefined);
const policyInput = fc.record(
  {
    version: fc.constantFrom("1" as const, 1 as const),
    default_action: fc.option(fc.constantFrom(...POLICY_ACTIONS), { nil: undefined }),
    rules: fc.array(ruleInput, { maxLength: 8 }),
    classify: fc.array(classifyEntry, { maxLength: 3 }),
  },
  { requiredKeys: ["version", "rules", "classify"] },
);

type RuleInput = typeof ruleInput extends fc.Arbitrary<infer T> ? T : never;

/** Drops repeated ids, which a valid policy cannot have. */
function uniqueIds(rules: readonly RuleInput[]): RuleInput[] {
  const seen = new Set<string>();
  return rules.map((rule) => {
    if (rule.id === undefined) return rule;
    if (seen.has(rule.id)) {
      const { id: _dropped, ...rest } = rule;
      void _dropped;
      return rest;
    }
    seen.add(rule.id);
    return rule;
  });
}

/** The YAML document a person would write for a generated rule. */
function ruleDocument(rule: RuleInput): Record<string, unknown> {
  return {
    ...(rule.id !== undefined ? { id: rule.id } : {}),
    ...(rule.description !== undefined ? { description: rule.description } : {}),
    ...(rule.match !== undefined ? { match: rule.match } : {}),
    action: rule.action,
    ...(rule.level !== undefined ? { level: rule.level } : {}),
    ...(rule.timeout !== undefined ? { timeout: rule.timeout } : {}),
    ...(rule.rate !== undefined ? { rate_limit: `${rule.rate[0]}/${rule.rate[1]}` } : {}),
    ...(rule.time !== undefined ? { conditions: { time_of_day: rule.time } } : {}),
  };
}

/** The model the parser must produce for a generated rule. */
function expectedRule(rule: RuleInput, index: number): Record<string, unknown> {
  return {
    id: rule.id ?? `rule-${index + 1}`,
    index,
    ...(rule.description !== undefined ? { description: rule.description } : {}),
    match: rule.match ?? {},
    action: rule.action,
    ...(rule.level !== undefined ? { level: rule.level } : {}),
    ...(rule.timeout !== undefined ? { timeout: rule.timeout } : {}),
    ...(rule.rate !== undefined
      ? {
          rate_limit: {
            count: rule.rate[0],
            unit: rule.rate[1],
            windowMs: RATE_UNIT_MS[rule.rate[1]],
            text: `${rule.rate[0]}/${rule.rate[1]}`,
          },
        }
      : {}),
    ...(rule.time !== undefined ? { conditions: { time_of_day: { timezone: "UTC", ...rule.time } } } : {}),
  };
}

describe("generated valid policies", () => {
  it("parse back from yaml.stringify to the same model", () => {
    fc.assert(
      fc.property(policyInput, fc.constantFrom("block", "flow"), (input, style) => {
        const rules = uniqueIds(input.rules);
        const document = {
          version: input.version,
          ...(input.default_action !== undefined ? { default_action: input.default_action } : {}),
          rules: rules.map(ruleDocument),
          classify: input.classify,
        };
        const text = style === "flow" ? stringify(document, { collectionStyle: "flow" }) : stringify(document);
        const result = parsePolicy(text);
        if (!result.ok) throw new Error(`${text}\n${JSON.stringify(result.issues)}`);
        const withoutLines = result.value.rules.map((rule) => {
          const copy: Record<string, unknown> = { ...rule };
          delete copy["line"];
          return copy;
        });
        expect(withoutLines).toEqual(rules.map(expectedRule));
        expect(result.value.default_action).toBe(input.default_action ?? "ask");
        expect(result.value.classify).toEqual(input.classify);
        expect(result.value.version).toBe("1");
      }),
      { numRuns: 200 },
    );
  });
});
