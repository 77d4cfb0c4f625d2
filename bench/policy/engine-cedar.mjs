// Cedar (@cedar-policy/cedar-wasm): each rule is one `permit` policy with id `p<position>`; the policy set
// is preparsed once. Cedar has no rule order, so the decision is the lowest-numbered satisfied policy
// (first match), or the default when none is satisfied.
import { preparsePolicySet, statefulIsAuthorized } from "@cedar-policy/cedar-wasm/nodejs";
import { classifyAction } from "../../packages/core/dist/index.js";

const str = (s) => JSON.stringify(s);
const cmp = (field, pattern) =>
  pattern.includes("*") ? `${field} like ${str(pattern)}` : `${field} == ${str(pattern)}`;

function argCondition(key, value) {
  if (key === "options.mode") {
    return `context.args has options && context.args.options has mode && context.args.options.mode == ${str(value)}`;
  }
  if (typeof value === "number") return `context.args has ${key} && context.args.${key} == ${value}`;
  // `/srv/p/**` (picomatch) is `/srv/p/*` in Cedar, whose `*` crosses slashes.
  const pattern = value.endsWith("/**") ? value.slice(0, -1) : value;
  return `context.args has ${key} && ${cmp(`context.args.${key}`, pattern)}`;
}

/** One engine-neutral rule as Cedar policy text. */
export function toCedar(rule) {
  const conditions = [];
  if (rule.tool !== undefined) conditions.push(cmp("context.tool", rule.tool));
  if (rule.server !== undefined) conditions.push(`context has server && ${cmp("context.server", rule.server)}`);
  if (rule.category !== undefined) conditions.push(`context.category == ${str(rule.category)}`);
  for (const [key, value] of Object.entries(rule.args)) conditions.push(argCondition(key, value));
  const when = conditions.length === 0 ? "" : ` when { ${conditions.join(" && ")} }`;
  return `permit(principal, action, resource)${when};`;
}

export function build(policy) {
  const staticPolicies = {};
  for (const rule of policy.rules) staticPolicies[`p${rule.id}`] = toCedar(rule);
  const parsed = preparsePolicySet("bench", { staticPolicies });
  if (parsed.type !== "success") throw new Error(`cedar: ${JSON.stringify(parsed.errors.slice(0, 3))}`);
  return {
    prepare: (request) => ({
      principal: { type: "Agent", id: "agent" },
      action: { type: "Action", id: "call" },
      resource: { type: "Tool", id: request.tool },
      context: {
        tool: request.tool,
        server: request.server,
        category: classifyAction(request, []).category,
        args: request.arguments,
      },
      preparsedPolicySetId: "bench",
      entities: [],
    }),
    decide: (call) => {
      const answer = statefulIsAuthorized(call);
      if (answer.type !== "success") return "error";
      if (answer.response.diagnostics.errors.length > 0) return "error";
      let best = Infinity;
      for (const id of answer.response.diagnostics.reason) best = Math.min(best, Number(id.slice(1)));
      return best === Infinity ? "default" : String(best);
    },
  };
}
