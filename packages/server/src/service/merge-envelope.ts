/**
 * The `/pre-tool-check` answer: the contract's own envelope, made stricter by the rest of the one
 * pipeline (policy rules, consent graph). The stricter route wins, every reason is kept.
 */
import { strictestRoute, type ContractEnvelope, type Decision, type Reason, type Route } from "@acp/core";

/** What the pipeline adds to the envelope: the route it decided, the deciding rule and its reasons. */
export interface PipelineSummary {
  readonly decision_id: string;
  readonly route: Route;
  readonly rule: string | null;
  readonly reasons: readonly Reason[];
}

/** The envelope `/pre-tool-check` returns: the contract envelope plus the pipeline's summary. */
export type PreToolCheckEnvelope = ContractEnvelope & { readonly decision: PipelineSummary };

/** Merges the pipeline's decision into the contract envelope (never loosening it). */
export function mergeDecision(
  envelope: ContractEnvelope,
  decision: Decision,
  decisionId: string,
): PreToolCheckEnvelope {
  const architecture = envelope.architecture_decision;
  const route = strictestRoute(architecture.route, decision.route);
  const extra = decision.reasons
    .filter((r) => r.source !== "contract")
    .map((r) => ({ code: r.code, message: r.message }));
  const blockers = [...envelope.hard_blockers];
  if (decision.route === "refuse" && architecture.route !== "refuse" && !blockers.includes("policy_refused")) {
    blockers.push("policy_refused");
  }
  const pass = route === "accept" && blockers.length === 0 && envelope.validation_errors.length === 0;
  return {
    ...envelope,
    gate_decision: pass ? "pass" : "fail",
    recommended_action: pass ? "accept" : strictestRoute(route, "ask"),
    hard_blockers: blockers,
    architecture_decision: { ...architecture, route, reasons: [...architecture.reasons, ...extra] },
    aix: { hard_blockers: [...blockers] },
    decision: { decision_id: decisionId, route: decision.route, rule: decision.rule, reasons: decision.reasons },
  };
}
