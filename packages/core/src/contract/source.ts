/** The action contract as a pipeline source: an event in, a verdict with reasons out. */
import type { Reason, SourceVerdict } from "../pipeline/types.js";
import { strictestRoute } from "../route/index.js";
import { shouldExecuteTool } from "./execute.js";
import { checkToolPrecheck } from "./sdk.js";

/**
 * Judges an `ActionRequest.contract` event for the pipeline (source `contract`). The route is the
 * envelope's (never accept unless the tool may execute); every reason of the envelope is kept, so
 * each hard blocker reaches the decision in plain words. `rule` is the table cell that decided,
 * `category.authorization_state`, when the event is valid. Never throws.
 */
export function evaluateActionContract(event: unknown): SourceVerdict {
  const envelope = checkToolPrecheck(event);
  const executable = shouldExecuteTool(envelope);
  const route = executable ? "accept" : strictestRoute(envelope.recommended_action, "ask");
  const reasons: Reason[] = envelope.architecture_decision.reasons.map((r) => ({
    source: "contract",
    code: r.code,
    message: r.message,
  }));
  const { tool_category: category, authorization_state: state } = envelope.audit;
  if (category === null || state === null) return { source: "contract", route, reasons };
  return { source: "contract", route, reasons, rule: `${category}.${state}` };
}
