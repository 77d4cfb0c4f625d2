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
  /** The policy version the pipeline decided by (`sha256:` of the policy file), when the service names one. */
  readonly policy_hash?: string;
}

/** The envelope `/pre-tool-check` returns: the contract envelope plus the pipeline's summary. */
export type PreToolCheckEnvelope = ContractEnvelope & { readonly decision: PipelineSummary };

/**
 * Every field of the contract envelope, so that the merged answer is built as one object literal (a copy
 * by spread plus a new `decision` key costs V8 a slow property add per answer, ~1.5 µs): a field added
 * to {@link ContractEnvelope} does not compile until it is listed here and copied below.
 */
const ENVELOPE_FIELDS = {
  contract: true,
  gate_decision: true,
  recommended_action: true,
  hard_blockers: true,
  architecture_decision: true,
  aix: true,
  validation_errors: true,
  audit: true,
} as const satisfies Record<keyof ContractEnvelope, true>;

/** The contract envelope's fields in order (the merged answer keeps it, then `decision`). */
export const CONTRACT_ENVELOPE_FIELDS: readonly (keyof ContractEnvelope)[] = Object.keys(
  ENVELOPE_FIELDS,
) as (keyof ContractEnvelope)[];

/** Merges the pipeline's decision into the contract envelope (never loosening it). */
export function mergeDecision(
  envelope: ContractEnvelope,
  decision: Decision,
  decisionId: string,
): PreToolCheckEnvelope {
  const architecture = envelope.architecture_decision;
  const route = strictestRoute(architecture.route, decision.route);
  const reasons: ContractEnvelope["architecture_decision"]["reasons"][number][] = [...architecture.reasons];
  for (const r of decision.reasons) if (r.source !== "contract") reasons.push({ code: r.code, message: r.message });
  const blockers = [...envelope.hard_blockers];
  if (decision.route === "refuse" && architecture.route !== "refuse" && !blockers.includes("policy_refused")) {
    blockers.push("policy_refused");
  }
  const pass = route === "accept" && blockers.length === 0 && envelope.validation_errors.length === 0;
  return {
    contract: envelope.contract,
    gate_decision: pass ? "pass" : "fail",
    recommended_action: pass ? "accept" : strictestRoute(route, "ask"),
    hard_blockers: blockers,
    architecture_decision: { ...architecture, route, reasons },
    aix: { hard_blockers: [...blockers] },
    validation_errors: envelope.validation_errors,
    audit: envelope.audit,
    decision: {
      decision_id: decisionId,
      route: decision.route,
      rule: decision.rule,
      reasons: decision.reasons,
      ...(decision.policy_hash !== undefined ? { policy_hash: decision.policy_hash } : {}),
    },
  };
}
