import { describe, expect, it } from "vitest";
import { formatIssue, parsePolicy, type Issue } from "@acp/core";

/** Parses text that must be invalid and returns its issues. */
function issuesOf(text: string): readonly Issue[] {
  const result = parsePolicy(text);
  if (result.ok) throw new Error("expected issues, the policy is valid");
  return result.issues;
}

/** Each issue as `LINE:COL: message (help)`. */
function problems(text: string): string[] {
  return issuesOf(text).map((issue) => formatIssue(issue));
}

const RULE = 'version: "1"\nrules:\n';

describe("parsePolicy reports each problem with its place, code and a fix", () => {
  it("suggests the action meant by a typo", () => {
    const issues = issuesOf(`${RULE}  - match: { tool: send_email }\n    action: alow\n`);
    expect(issues.map((i) => [i.code, i.path])).toEqual([["unknown_action", ["rules", 0, "action"]]]);
    expect(issues.map((i) => formatIssue(i, "policy.yml"))).toEqual([
      "policy.yml:4:13: while reading rule `rule-1`: unknown action `alow` (expected allow, ask or deny) (did you mean `allow`)",
    ]);
  });

  it("suggests the action meant by a word from another vocabulary", () => {
    expect(problems('version: "1"\ndefault_action: refuse\n')).toEqual([
      "2:17: unknown action `refuse` (expected allow, ask or deny) (did you mean `deny`)",
    ]);
  });

  it("reports an unknown key with a did-you-mean, and the missing key it was meant to be", () => {
    const issues = issuesOf(`${RULE}  - id: send-mail\n    match: {}\n    acton: deny\n`);
    expect(issues.map((i) => [i.code, formatIssue(i)])).toEqual([
      [
        "missing_key",
        "3:5: while reading rule `send-mail`: missing `action` (add `action: allow`, `action: ask` or `action: deny`)",
      ],
      ["unknown_key", "5:5: while reading rule `send-mail`: unknown key `acton` (did you mean `action`)"],
    ]);
  });

  it("lists the expected keys when no key is close", () => {
    expect(problems('version: "1"\nowner: me\n')).toEqual([
      "2:1: unknown key `owner` (expected version, default_action, rules or classify)",
    ]);
  });

  it("names unknown keys inside match and suggests across names people use", () => {
    expect(
      problems(
        `${RULE}  - match:\n      tol: send_email\n      arguments: {}\n    action: deny\n    risk_level: high\n`,
      ),
    ).toEqual([
      "4:7: while reading rule `rule-1`: unknown key `tol` in `match` (did you mean `tool`)",
      "5:7: while reading rule `rule-1`: unknown key `arguments` in `match` (did you mean `args`)",
      "7:5: while reading rule `rule-1`: unknown key `risk_level` (did you mean `level`)",
    ]);
  });

  it("reports unknown categories and risk levels with a suggestion", () => {
    expect(problems(`${RULE}  - match: { category: comunication }\n    action: ask\n    level: hihg\n`)).toEqual([
      "3:24: while reading rule `rule-1`: unknown category `comunication` (expected read, write, communication, financial, system, public or physical) (did you mean `communication`)",
      "5:12: while reading rule `rule-1`: unknown risk level `hihg` (expected low, medium, high or critical) (did you mean `high`)",
    ]);
  });

  it("reports a duplicate key at its second occurrence", () => {
    const issues = issuesOf('version: "1"\ndefault_action: allow\ndefault_action: deny\n');
    expect(issues.map((i) => [i.code, i.path, formatIssue(i)])).toEqual([
      [
        "duplicate_key",
        ["default_action"],
        "3:1: duplicate key `default_action` (first at line 2) (remove one of them)",
      ],
    ]);
  });

  it("reports a duplicate rule id at the later rule", () => {
    const issues = issuesOf(`${RULE}  - id: mail\n    action: ask\n  - id: mail\n    action: deny\n`);
    expect(issues.map((i) => [i.code, i.path, formatIssue(i)])).toEqual([
      [
        "duplicate_rule_id",
        ["rules", 1, "id"],
        "5:9: duplicate rule id `mail` (first used by rule 1 at line 3) (rule ids must be unique)",
      ],
    ]);
  });

  it("refuses an explicit id that is another rule's positional id", () => {
    expect(problems(`${RULE}  - id: rule-2\n    action: ask\n  - action: deny\n`)).toEqual([
      "3:9: rule id `rule-2` is also the id of the unnamed rule 2 (rules without `id` are named `rule-<position>`; choose another id)",
    ]);
  });

  it("refuses rule ids that are not slugs, and numbers that should be quoted", () => {
    expect(problems(`${RULE}  - id: Send Mail\n    action: ask\n  - id: 7\n    action: ask\n`)).toEqual([
      "3:9: while reading rule `rule-1`: invalid rule id `Send Mail` (ids are slugs of at most 128 lowercase letters, digits, `-` and `_`, like `send-mail`)",
      '5:9: while reading rule `rule-2`: `id` must be a string, got the number `7` (quote it: `id: "7"`)',
    ]);
  });

  it("refuses more than one YAML document", () => {
    const issues = issuesOf('version: "1"\n---\nversion: "1"\n');
    expect(issues.map((i) => [i.code, formatIssue(i)])).toEqual([
      [
        "multiple_documents",
        "2:1: the file holds 2 yaml documents, a policy is one (remove the `---` separator and what follows it)",
      ],
    ]);
  });

  it("reports YAML syntax errors where the parser finds them", () => {
    const issues = issuesOf('version: "1"\nrules: [\n  { action: deny }\n');
    expect(issues.every((i) => i.code === "yaml_syntax_error")).toBe(true);
    expect(issues.map((i) => formatIssue(i))[0]).toBe(
      "4:1: yaml syntax error: flow sequence in block collection must be sufficiently indented and end with a ]",
    );
  });

  it("reports an unterminated quote at the end of the text", () => {
    expect(problems('version: "1\n')).toEqual(['2:1: yaml syntax error: missing closing "quote']);
  });

  it("reports wrong types with what was found", () => {
    expect(problems('version: "1"\nrules: {}\n')).toEqual([
      "2:8: `rules` must be a list, got a mapping (each item starts with `- `; write `rules: []` for none)",
    ]);
    expect(problems(`${RULE}  - action: [deny]\n    timeout: 5m\n    description: 12\n`)).toEqual([
      "3:13: while reading rule `rule-1`: `action` must be allow, ask or deny, got a list",
      "4:14: while reading rule `rule-1`: `timeout` must be a number of seconds, got the string `5m` (like `timeout: 300`)",
      "5:18: while reading rule `rule-1`: `description` must be a string, got the number `12`",
    ]);
  });

  it("refuses a rule that is not a mapping and a policy that is not a mapping", () => {
    expect(problems(`${RULE}  - deny\n`)).toEqual([
      "3:5: while reading rule `rule-1`: a rule must be a mapping with `match` and `action`, got the string `deny`",
    ]);
    expect(problems("- version: 1\n")).toEqual([
      "1:1: a policy must be a mapping with `version`, `default_action` and `rules`, got a list",
    ]);
  });

  it("refuses keys that are not strings", () => {
    expect(problems('version: "1"\n1: x\n')).toEqual(["2:1: keys of `policy` must be strings, got the number `1`"]);
  });

  it("refuses invalid globs in tool, server and args", () => {
    expect(
      problems(`${RULE}  - match: { tool: "send_[", server: "", args: { to: "{a,b" } }\n    action: deny\n`),
    ).toEqual([
      '3:20: while reading rule `rule-1`: `tool`: invalid glob `send_[`: missing closing: "]" - use "\\\\]" to match literal characters (globs use `*`, `?`, `[abc]` and `{a,b}`; brackets must be balanced)',
      "3:38: while reading rule `rule-1`: `server`: empty pattern (globs use `*`, `?`, `[abc]` and `{a,b}`; brackets must be balanced)",
      '3:54: while reading rule `rule-1`: `to`: invalid glob `{a,b`: missing closing: "}" - use "\\\\}" to match literal characters (globs use `*`, `?`, `[abc]` and `{a,b}`; brackets must be balanced)',
    ]);
  });

  it("asks for dotted paths instead of nested argument mappings, and refuses malformed paths", () => {
    expect(
      problems(`${RULE}  - match:\n      args:\n        to: { address: x }\n        a..b: 1\n    action: deny\n`),
    ).toEqual([
      '5:13: while reading rule `rule-1`: `to` must be a string, number, boolean or null, got a mapping (match nested keys with a dotted path, like `to.address: "…"`)',
      "6:9: while reading rule `rule-1`: invalid argument path `a..b` in `args` (dotted paths like `to.address` have no empty parts)",
    ]);
  });

  it("refuses invalid time zones and malformed times", () => {
    const text = `${RULE}  - action: deny\n    conditions:\n      time_of_day: { after: "9:00", before: "25:00", timezone: Mars/Olympus }\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => i.code)).toEqual(["invalid_time", "invalid_time", "invalid_timezone"]);
    expect(issues.map((i) => formatIssue(i))).toEqual([
      "5:29: while reading rule `rule-1`: `after`: invalid time `9:00` (write two-digit hours: `09:00`)",
      "5:45: while reading rule `rule-1`: `before`: invalid time `25:00` (expected HH:MM in 24-hour time, like `09:00` or `17:30`)",
      "5:64: while reading rule `rule-1`: unknown time zone `Mars/Olympus` (use an IANA zone like `UTC` or `Europe/Paris`)",
    ]);
    expect(issues[2]?.path).toEqual(["rules", 0, "conditions", "time_of_day", "timezone"]);
  });

  it("refuses a window whose after equals its before", () => {
    const issues = issuesOf(
      `${RULE}  - action: deny\n    conditions: { time_of_day: { after: "09:00", before: "09:00" } }\n`,
    );
    expect(issues.map((i) => [i.code, formatIssue(i)])).toEqual([
      [
        "empty_time_window",
        '4:58: while reading rule `rule-1`: `after` and `before` are both `09:00`, so the window is empty (a window that crosses midnight is fine (`after: "22:00"`, `before: "06:00"`))',
      ],
    ]);
  });

  it("refuses a time window with neither bound", () => {
    expect(problems(`${RULE}  - action: deny\n    conditions: { time_of_day: { timezone: UTC } }\n`)).toEqual([
      '4:32: while reading rule `rule-1`: `time_of_day` needs `after`, `before` or both (like `after: "09:00"`)',
    ]);
  });

  it("refuses malformed rate limits and suggests the unit meant", () => {
    const text = `${RULE}  - { action: allow, rate_limit: 20/minutes }\n  - { action: allow, rate_limit: 0/hour }\n  - { action: allow, rate_limit: 20 }\n`;
    expect(problems(text)).toEqual([
      "3:34: while reading rule `rule-1`: invalid rate limit `20/minutes`: unknown unit `minutes` (did you mean `20/minute`)",
      "4:34: while reading rule `rule-2`: invalid rate limit `0/hour`: count must be at least 1 (use `action: deny` to refuse every call)",
      '5:34: while reading rule `rule-3`: `rate_limit` must be a string `N/unit`, got the number `20` (like `rate_limit: "20/minute"`)',
    ]);
  });

  it("refuses timeouts that are not whole seconds within the limit", () => {
    expect(
      problems(
        `${RULE}  - { action: ask, timeout: 0 }\n  - { action: ask, timeout: 1.5 }\n  - { action: ask, timeout: 604801 }\n`,
      ),
    ).toEqual([
      "3:29: while reading rule `rule-1`: invalid timeout `0` (expected whole seconds from 1 to 604800)",
      "4:29: while reading rule `rule-2`: invalid timeout `1.5` (expected whole seconds from 1 to 604800)",
      "5:29: while reading rule `rule-3`: invalid timeout `604801` (expected whole seconds from 1 to 604800)",
    ]);
  });

  it("refuses unsupported and missing versions", () => {
    expect(problems('version: "2"\n')).toEqual([
      '1:10: unsupported policy version: got the string `2` (expected `"1"`)',
    ]);
    expect(problems("default_action: deny\n")).toEqual(['1:1: missing `version` (start the file with `version: "1"`)']);
  });

  it("refuses an empty file", () => {
    const issues = issuesOf("# nothing but a comment\n");
    expect(issues.map((i) => [i.code, formatIssue(i)])).toEqual([
      ["empty_policy", '1:1: the policy is empty (start with `version: "1"`, then `default_action` and `rules`)'],
    ]);
  });

  it("refuses unknown aliases and unresolved tags", () => {
    expect(problems('version: "1"\ndefault_action: *nope\n')).toEqual(["2:17: unknown alias `*nope`"]);
    expect(problems('version: "1"\ndefault_action: !custom deny\n')).toEqual([
      "2:17: unsupported yaml: unresolved tag: !custom",
    ]);
  });

  it("checks the classify section", () => {
    expect(problems('version: "1"\nclassify:\n  - category: read\n  - tool: x\n    level: high\n')).toEqual([
      '3:5: while reading classify entry 1: missing `tool` (like `tool: "send_*"`)',
      "4:5: while reading classify entry 2: sets neither `category` nor `risk_level` (add one or both, or remove the entry)",
      "5:5: while reading classify entry 2: unknown key `level` (did you mean `risk_level`)",
    ]);
  });

  it("keeps hostile input on one line and short in messages", () => {
    const issues = issuesOf(`version: "1"\n"evil\\nkey${"x".repeat(100)}": 1\n`);
    expect(issues.map((i) => formatIssue(i))).toEqual([
      `2:1: unknown key \`evil\\nkey${"x".repeat(32)}…\` (expected version, default_action, rules or classify)`,
    ]);
  });

  it("refuses a tool or server name holding a hidden character, which no call could match", () => {
    // pasted from a web page: a zero-width space after `delete`, a no-break space, a trailing space
    const text = `version: "1"
default_action: allow
rules:
  - id: no-drop
    match: { tool: "delete\u200b_database" }
    action: deny
  - id: prod
    match: { server: "prod\u00a0db" }
    action: deny
  - id: bidi-in-args
    match: { args: { text: "*\u202e*" } }
    action: deny
classify:
  - { tool: "wire_* ", category: financial }
`;
    const issues = issuesOf(text);
    expect(issues.map((i) => `${String(i.line)}:${String(i.column)} ${i.code}`)).toEqual([
      "5:20 invalid_glob",
      "8:22 invalid_glob",
      "14:13 invalid_glob",
    ]);
    expect(issues[0]?.message).toBe(
      "while reading rule `no-drop`: `tool`: a name never holds an invisible or control character (U+200B)",
    );
    expect(issues[2]?.message).toContain("a name never holds a space at its start or end");
  });

  it("tells a Windows path written with `\\` to be written with `/`", () => {
    const text = `${RULE}  - id: keys\n    match: { args: { path: 'C:\\Users\\alice\\.ssh\\**' } }\n    action: deny\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.code, i.path])).toEqual([["invalid_glob", ["rules", 0, "match", "args", "path"]]]);
    expect(issues[0]?.message).toContain("write `/` between a path's segments, on Windows too (`C:/Users/alice/**`");
  });

  it("reports every problem of a file in one pass, in file order", () => {
    const text = `version: "1"
default_action: alow
rules:
  - id: one
    match: { tool: "send_[" }
    action: ask
    rate_limit: "3/fortnight"
  - id: one
    acton: deny
classify:
  - { tool: x, category: reed }
`;
    expect(issuesOf(text).map((i) => `${String(i.line)}:${String(i.column)} ${i.code}`)).toEqual([
      "2:17 unknown_action",
      "5:20 invalid_glob",
      "7:17 invalid_rate_limit",
      "8:5 missing_key",
      "8:9 duplicate_rule_id",
      "9:5 unknown_key",
      "11:26 unknown_category",
    ]);
  });
});
