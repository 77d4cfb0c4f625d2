/**
 * Route inference for a schema-valid event: category × authorization state gives a base route,
 * the evidence rules can only make it stricter. The runtime's route is applied later (envelope).
 * The table is documented in docs/reference/action-contract.md; keep the two in step.
 */
import { strictestRoute, type Route } from "../route/index.js";
import { assessEvidence, type EvidenceAssessment } from "./evidence.js";
import type { ContractAuthorizationState, ContractEvent, ContractToolCategory } from "./vocabulary.js";

/** One reason behind a contract route: a stable code and a sentence a person understands. */
export interface ContractReason {
  readonly code: string;
  readonly message: string;
}

/** What the contract infers from an event, before the runtime's own route is applied. */
export interface ContractInference {
  readonly route: Route;
  /** The table cell that gave the base route, `category.authorization_state`. */
  readonly cell: string;
  /** Codes of every condition that blocks execution (empty exactly when `route` is accept). */
  readonly hard_blockers: readonly string[];
  readonly reasons: readonly ContractReason[];
  readonly evidence: EvidenceAssessment;
}

interface Finding {
  readonly route: Route;
  readonly blocker: boolean;
  readonly reason: ContractReason;
}

/** The base route of every category × authorization state (the document's tables). */
export const CONTRACT_ROUTE_TABLE: Readonly<
  Record<ContractToolCategory, Readonly<Record<ContractAuthorizationState, Route>>>
> = {
  public_read: {
    none: "accept",
    user_claimed: "accept",
    authenticated: "accept",
    validated: "accept",
    confirmed: "accept",
  },
  private_read: {
    none: "defer",
    user_claimed: "defer",
    authenticated: "accept",
    validated: "accept",
    confirmed: "accept",
  },
  write: { none: "defer", user_claimed: "ask", authenticated: "ask", validated: "ask", confirmed: "accept" },
  unknown: {
    none: "refuse",
    user_claimed: "refuse",
    authenticated: "refuse",
    validated: "refuse",
    confirmed: "refuse",
  },
};

function finding(route: Route, blocker: boolean, code: string, message: string): Finding {
  return { route, blocker, reason: { code, message } };
}

function baseFinding(category: ContractToolCategory, state: ContractAuthorizationState): Finding {
  const route = CONTRACT_ROUTE_TABLE[category][state];
  switch (category) {
    case "public_read":
      return finding(route, false, "public_read_allowed", "a public read may run without identity authorization");
    case "private_read":
      return route === "accept"
        ? finding(route, false, "private_read_authenticated", `the private read has \`${state}\` authorization`)
        : finding(
            route,
            true,
            "missing_authorization_for_private_read",
            `a private read needs at least \`authenticated\` authorization, the event has \`${state}\``,
          );
    case "write":
      if (route === "accept")
        return finding(route, false, "write_confirmed", "the user explicitly confirmed this write");
      if (state === "none") {
        const message =
          "a write has no usable authorization context (`none`); authenticate, validate and confirm first";
        return finding(route, true, "missing_authorization_for_write", message);
      }
      return finding(
        route,
        true,
        "missing_confirmation_for_write",
        `a consequential write executes only after explicit confirmation, the event has \`${state}\``,
      );
    case "unknown":
      return finding(
        route,
        true,
        "unknown_tool_category",
        "the tool category is `unknown`: a tool is not executable until it is classified",
      );
  }
}

function listIndexes(indexes: readonly number[]): string {
  const shown = indexes.slice(0, 5).map((i) => `evidence_refs[${i}]`);
  return indexes.length > 5 ? `${shown.join(", ")} and ${indexes.length - 5} more` : shown.join(", ");
}

function evidenceFindings(category: ContractToolCategory, evidence: EvidenceAssessment): Finding[] {
  const found: Finding[] = [];
  if (evidence.stale > 0) {
    found.push(
      finding(
        "accept",
        false,
        "evidence_not_counted",
        `stale evidence does not count: ${listIndexes(evidence.stale_indexes)}`,
      ),
    );
  }
  if (evidence.unverified > 0) {
    const message = `unverified evidence does not count: ${listIndexes(evidence.unverified_indexes)}`;
    found.push(finding("accept", false, "evidence_not_counted", message));
  }
  if ((category === "private_read" || category === "write") && evidence.usable === 0) {
    const message =
      evidence.total === 0
        ? `a ${category === "write" ? "write" : "private read"} needs at least one evidence ref, the event has none`
        : `a ${category === "write" ? "write" : "private read"} needs at least one evidence ref that is neither stale nor unverified, none of the ${evidence.total} qualifies`;
    found.push(finding("defer", true, "insufficient_evidence", message));
  }
  if (evidence.sensitive > 0) {
    const where = listIndexes(evidence.sensitive_indexes);
    found.push(
      category === "public_read"
        ? finding(
            "defer",
            true,
            "sensitive_evidence_for_public_read",
            `sensitive evidence contradicts the public_read classification: ${where}`,
          )
        : finding(
            "accept",
            false,
            "sensitive_evidence_ref",
            `evidence marked sensitive must stay out of audit logs: ${where}`,
          ),
    );
  }
  return found;
}

/**
 * Infers the contract's own route for a schema-valid event: the base table, made stricter by the
 * evidence rules. Pure and total over valid events; the runtime's route is not applied here.
 */
export function inferContractRoute(event: ContractEvent): ContractInference {
  const evidence = assessEvidence(event.evidence_refs);
  const findings = [baseFinding(event.tool_category, event.authorization_state)];
  if (event.tool_category !== "unknown") findings.push(...evidenceFindings(event.tool_category, evidence));
  const route = findings.reduce<Route>((acc, f) => strictestRoute(acc, f.route), "accept");
  const blockers = [...new Set(findings.filter((f) => f.blocker).map((f) => f.reason.code))];
  return {
    route,
    cell: `${event.tool_category}.${event.authorization_state}`,
    hard_blockers: blockers,
    reasons: findings.map((f) => f.reason),
    evidence,
  };
}
