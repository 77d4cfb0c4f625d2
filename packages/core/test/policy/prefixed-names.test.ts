import { describe, expect, it } from "vitest";
import { assertPolicy, findPrefixedToolNames } from "../../src/policy/index.js";

describe("findPrefixedToolNames", () => {
  it("points at a tool written as the proxy shows it to the agent, with the rule to write instead", () => {
    const policy = assertPolicy(`
version: "1"
rules:
  - id: no-repo-delete
    match: { tool: github__delete_repo }
    action: deny
  - id: fine
    match: { tool: delete_repo, server: github }
    action: deny
  - id: any-github
    match: { tool: "github__*" }
    action: ask
  - id: dunder
    match: { tool: "__init__" }
    action: ask
classify:
  - { tool: mail__send_digest, category: communication }
`);
    const issues = findPrefixedToolNames(policy);
    expect(issues.map((i) => [i.code, i.path.join("."), i.line, i.help])).toEqual([
      ["prefixed_tool_name", "rules.0.match.tool", 4, "write `tool: delete_repo` with `server: github`"],
      ["prefixed_tool_name", "rules.2.match.tool", 10, "write `tool: *` with `server: github`"],
      ["prefixed_tool_name", "classify.0.tool", undefined, "write `tool: send_digest` with `server: mail`"],
    ]);
    expect(issues[0]?.message).toBe(
      "rule `no-repo-delete`: `tool` `github__delete_repo` looks like the name `acp proxy` shows an agent " +
        "(server__tool); rules see the tool's own name and its server apart",
    );
  });
});
