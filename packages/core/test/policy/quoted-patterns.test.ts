import { describe, expect, it } from "vitest";
import { assertPolicy, findQuotedPatterns } from "../../src/policy/index.js";

describe("findQuotedPatterns", () => {
  it("points at a tool, server or args glob wholly in single or double quotes", () => {
    const policy = assertPolicy(`
version: "1"
rules:
  - id: keys
    match: { args: { path: "'*.pem'", cmd: '"rm -rf *"' } }
    action: deny
  - id: tools
    match: { tool: "'send_*'", server: '"mail-*"' }
    action: ask
`);
    const issues = findQuotedPatterns(policy);
    expect(issues.map((i) => [i.code, i.path.join("."), i.line])).toEqual([
      ["quoted_pattern", "rules.0.match.args.path", 4],
      ["quoted_pattern", "rules.0.match.args.cmd", 4],
      ["quoted_pattern", "rules.1.match.tool", 7],
      ["quoted_pattern", "rules.1.match.server", 7],
    ]);
    expect(issues[0]?.message).toBe(
      "rule `keys`: `path` pattern `'*.pem'` is wholly in quotes, and a glob's quotes are text it meets: it meets only a value written with them",
    );
    expect(issues[0]?.help).toBe('to meet the value without them, write `*.pem` (in YAML, `"*.pem"` holds no quote)');
  });

  it("leaves alone an unquoted glob, quotes inside a glob, an exact value and a home reference in double quotes", () => {
    const policy = assertPolicy(`
version: "1"
rules:
  - match: { args: { a: "*.pem", b: '*curl * -d "*"*', c: "'literal'", d: '"$HOME/projects/**"', e: "'*' and '*'", f: "'" } }
    action: deny
`);
    expect(findQuotedPatterns(policy)).toEqual([]);
  });
});
