// ACP's own evaluator, from the built package (packages/core/dist). `noIndex: true` runs the same
// compiled rules through one wildcard bucket: a linear scan with precompiled globs, the baseline the
// index is measured against.
import { compilePolicy, matchPolicy } from "../../packages/core/dist/index.js";

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
  let compiled = compilePolicy(toAcpPolicy(policy));
  if (noIndex) {
    const none = new Map();
    const wildcard = compiled.rules.map((_, i) => i);
    const leaf = { children: undefined, rules: undefined };
    const index = { exact: none, prefix: leaf, suffix: leaf, category: none, server: none, wildcard };
    compiled = { ...compiled, index };
  }
  const now = new Date("2025-03-10T12:00:00Z");
  return {
    prepare: (request) => request,
    decide: (request) => matchPolicy(compiled, request, now).ruleId,
  };
}
