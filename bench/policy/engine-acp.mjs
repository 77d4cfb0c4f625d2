// ACP's own evaluator, from the built package (packages/core/dist). `noIndex: true` runs the same compiled
// rules without the index: a linear scan in file order with precompiled globs (ruleMatches on every rule),
// the baseline the index is measured against.
import { classifyAction, compilePolicy, matchPolicy, ruleMatches } from "../../packages/core/dist/index.js";

/** The engine-neutral rules as an ACP `Policy` object (what the YAML parser would produce). */
export function toAcpPolicy(policy) {
  const rules = policy.rules.map((r, index) => {
    const match = {};
    if (r.tool !== undefined) match.tool = r.tool;
    if (r.server !== undefined) match.server = r.server;
    if (r.category !== undefined) match.category = r.category;
    if (Object.keys(r.args).length > 0) match.args = r.args;
    return { id: String(r.id), index, match, action: r.action };
  });
  return { version: "1", default_action: policy.defaultAction, rules, classify: [] };
}

export function build(policy, { noIndex = false } = {}) {
  const compiled = compilePolicy(toAcpPolicy(policy));
  const now = new Date("2025-03-10T12:00:00Z");
  if (noIndex) {
    const rules = compiled.rules;
    return {
      prepare: (request) => request,
      decide: (request) => {
        const { category } = classifyAction(request, compiled.policy.classify);
        for (const rule of rules) if (ruleMatches(rule, request, category, now)) return rule.rule.id;
        return "default";
      },
    };
  }
  return {
    prepare: (request) => request,
    decide: (request) => matchPolicy(compiled, request, now).ruleId,
  };
}
