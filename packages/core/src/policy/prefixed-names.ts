import type { Issue } from "../issues/index.js";
import type { Policy } from "./types.js";

/** Between a server's name and a tool's in the names `acp proxy` may show an agent (`github__create_issue`). */
const PROXY_PREFIX = /^([A-Za-z0-9][A-Za-z0-9._-]*)__([^_].*)$/;

/**
 * Finds `tool` patterns written as the proxy shows a tool to the agent, `server__tool`: rules and
 * `classify:` see the tool's own name on its upstream and its server apart (`tool: create_issue`,
 * `server: github`), so such a rule matches nothing the proxy decides — a deny rule written so denies
 * nothing. One `prefixed_tool_name` issue each, meant as a warning (an upstream may name a tool with `__`
 * itself).
 */
export function findPrefixedToolNames(policy: Policy): Issue[] {
  const issues: Issue[] = [];
  const check = (tool: string | undefined, path: (string | number)[], where: string, line?: number): void => {
    const parts = tool === undefined ? null : PROXY_PREFIX.exec(tool);
    if (parts === null) return;
    const [, server, name] = parts as unknown as [string, string, string];
    issues.push({
      code: "prefixed_tool_name",
      path,
      message:
        `${where}\`tool\` \`${tool}\` looks like the name \`acp proxy\` shows an agent (server__tool); ` +
        "rules see the tool's own name and its server apart",
      help: `write \`tool: ${name}\` with \`server: ${server}\``,
      ...(line !== undefined ? { line } : {}),
    });
  };
  for (const rule of policy.rules) {
    check(rule.match.tool, ["rules", rule.index, "match", "tool"], `rule \`${rule.id}\`: `, rule.line);
  }
  policy.classify.forEach((entry, i) => check(entry.tool, ["classify", i, "tool"], `classify entry ${i + 1}: `));
  return issues;
}
