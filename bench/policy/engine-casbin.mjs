// Casbin (node-casbin): one policy row per rule, in file order, and one matcher using Casbin's built-in
// globMatch (tool, server, `to`) and keyMatch (path prefixes). With `some(where (p.eft == allow))` Casbin
// stops at the first matching row, and enforceExSync returns that row: first match, like ours.
// "_" marks a criterion the rule does not have. Requests are flattened to the row's fields (untimed).
import { newEnforcer, newModelFromString } from "casbin";
import { classifyAction } from "../../packages/core/dist/index.js";

const MODEL = `
[request_definition]
r = tool, server, cat, to, path, amount, channel, mode

[policy_definition]
p = id, tool, server, cat, to, path, amount, channel, mode

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = (p.tool == "_" || r.tool == p.tool || globMatch(r.tool, p.tool)) && \
 (p.server == "_" || r.server == p.server || globMatch(r.server, p.server)) && \
 (p.cat == "_" || r.cat == p.cat) && \
 (p.to == "_" || r.to == p.to || globMatch(r.to, p.to)) && \
 (p.path == "_" || keyMatch(r.path, p.path)) && \
 (p.amount == "_" || r.amount == p.amount) && \
 (p.channel == "_" || r.channel == p.channel) && \
 (p.mode == "_" || r.mode == p.mode)
`;

/** One engine-neutral rule as a Casbin policy row. */
export function toCasbinRow(rule) {
  const a = rule.args;
  return [
    String(rule.id),
    rule.tool ?? "_",
    rule.server ?? "_",
    rule.category ?? "_",
    a.to ?? "_",
    a.path === undefined ? "_" : a.path.replace(/\/\*\*$/, "/*"),
    a.amount === undefined ? "_" : String(a.amount),
    a.channel ?? "_",
    a["options.mode"] ?? "_",
  ];
}

export async function build(policy) {
  const enforcer = await newEnforcer(newModelFromString(MODEL));
  await enforcer.addPolicies(policy.rules.map(toCasbinRow));
  return {
    prepare: (request) => {
      const a = request.arguments;
      return [
        request.tool,
        request.server ?? "",
        classifyAction(request, []).category,
        typeof a.to === "string" ? a.to : "",
        typeof a.path === "string" ? a.path : "",
        a.amount === undefined ? "" : String(a.amount),
        typeof a.channel === "string" ? a.channel : "",
        typeof a.options?.mode === "string" ? a.options.mode : "",
      ];
    },
    decide: (row) => {
      const [, explain] = enforcer.enforceExSync(...row);
      return explain.length === 0 ? "default" : explain[0];
    },
  };
}
