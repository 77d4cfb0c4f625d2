/**
 * An intent that contradicts the policy: it allows an action the policy refuses outright, for every argument
 * value a user or the intent could give. Such an intent can never be carried out; `acp policy verify` treats it
 * as invalid input (exit 4), since one of the two files is not what its author meant.
 */
import { compilePolicy, matchPolicy } from "../evaluate/index.js";
import type { Issue } from "../issues/index.js";
import type { Policy } from "../policy/index.js";
import { compileActionPatterns } from "../session/index.js";
import type { BuiltModel } from "./model.js";
import type { ModelAction, VerifyModel } from "./types.js";

function refusedOutright(
  compiled: ReturnType<typeof compilePolicy>,
  model: VerifyModel,
  action: ModelAction,
  now: Date,
): string | undefined {
  let rule: string | undefined;
  for (const value of model.values) {
    if (value.cls === "external_untrusted") continue;
    const args = value.value === null ? {} : Object.fromEntries(model.argumentKeys.map((k) => [k, value.value]));
    const match = matchPolicy(compiled, { server: action.server, tool: action.tool, arguments: args }, now);
    if (match.action !== "deny") return undefined;
    rule = match.rule === null ? "`default_action: deny`" : `rule \`${match.ruleId}\``;
  }
  return rule;
}

/**
 * Every `allowed_actions` entry whose every action in the model is refused by the policy whatever trusted
 * value it is given (`intent_contradicts_policy`, with the entry's path for a line and column).
 */
export function checkIntentAgainstPolicy(policy: Policy, built: BuiltModel, now: Date): Issue[] {
  const compiled = compilePolicy(policy);
  const issues: Issue[] = [];
  built.intent.intent.allowed_actions.forEach((pattern, i) => {
    const patterns = compileActionPatterns([pattern], ["allowed_actions", i]);
    if (!patterns.ok) return;
    const covered = built.model.actions.filter((a) => a.inIntent && patterns.value.match([a.name]) !== undefined);
    if (covered.length === 0) return;
    const rules = covered.map((a) => refusedOutright(compiled, built.model, a, now));
    if (rules.some((r) => r === undefined)) return;
    const which = [...new Set(rules)].join(", ");
    const what = covered.length === 1 ? `\`${covered[0]?.name ?? ""}\`` : `every action \`${pattern}\` names`;
    issues.push({
      code: "intent_contradicts_policy",
      path: ["allowed_actions", i],
      message: `the intent allows ${what} but the policy refuses it outright (${which})`,
      help: "allow it in the policy (allow or ask), or remove it from the intent",
    });
  });
  return issues;
}
