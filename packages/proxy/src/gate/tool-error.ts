import type { Decision } from "@acp/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** The `_meta` key under which a refused call carries the decision, for programs that read it. */
export const DECISION_META_KEY = "acp/decision";

/** A tool error result the agent can read (`isError: true`), never a hang and never a protocol error. */
export function toolError(text: string, decision?: Decision): CallToolResult {
  return {
    content: [{ type: "text", text }],
    isError: true,
    ...(decision !== undefined
      ? {
          _meta: {
            [DECISION_META_KEY]: {
              route: decision.route,
              rule: decision.rule,
              reasons: decision.reasons.map((r) => ({ source: r.source, code: r.code, message: r.message })),
            },
          },
        }
      : {}),
  };
}

/** How a deciding rule is named to the agent: ``policy rule `no-transfers` `` or ``rule `graph:mail.send` ``. */
export function describeRule(rule: string | null): string {
  if (rule === null) return "policy";
  // the evaluator's marker for an evaluation that failed before any rule decided: no rule of that name
  if (rule === "policy:(error)" || rule === "(error)") return "the policy, which could not be evaluated";
  return rule.startsWith("policy:") ? `policy rule \`${rule.slice("policy:".length)}\`` : `rule \`${rule}\``;
}

/** How a decision source is named to a person: ``the session`` for the session runtime, and so on. */
const SOURCE_NAMES: Readonly<Record<string, string>> = {
  policy: "policy",
  session: "the session",
  graph: "the consent graph",
  contract: "the action contract",
  pipeline: "the decision pipeline",
};

/**
 * What decided: the deciding rule when there is one (``policy rule `no-transfers` ``), else the source whose
 * verdict decided (the first of the strictest, as the pipeline chooses it) — ``the session`` when the
 * session runtime asked or refused on its own checks, which name no rule.
 */
export function describeDecider(decision: Decision): string {
  if (decision.rule !== null) return describeRule(decision.rule);
  const source = decision.verdicts.find((v) => v.route === decision.route)?.source;
  return source === undefined ? "policy" : (SOURCE_NAMES[source] ?? `\`${source}\``);
}

/**
 * `refused by policy rule `no-transfers`: transfers need a person (reason; reason)`; a refusal no rule made
 * names its source (``refused by the session: text from `mail.read` wants …``). The reasons are those of
 * the sources that refused (and the pipeline's own), not of sources that would have let the call through
 * ("within the intent and the approved plan" explains nothing about a refusal); every reason when the
 * decision carries no per-source verdicts.
 */
export function refusalText(decision: Decision): string {
  const refusing = new Set<string>(decision.verdicts.filter((v) => v.route === "refuse").map((v) => v.source));
  const deciding = decision.reasons.filter((r) => refusing.has(r.source) || r.source === "pipeline");
  const chosen = refusing.size > 0 && deciding.length > 0 ? deciding : decision.reasons;
  const reasons = chosen.map((r) => r.message).filter((m) => m !== "");
  return `refused by ${describeDecider(decision)}${reasons.length > 0 ? `: ${reasons.join("; ")}` : ""}`;
}

/** Why a call approved with edits does not run: the agent's tool error, and what the channels are told. */
export function editRefusalText(decision: Decision): string {
  return `approved with edits, but the edited arguments are ${refusalText(decision)}`;
}
