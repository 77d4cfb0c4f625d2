/**
 * The decision envelope of the Agent Action Contract v1: the fields the document requires
 * (`gate_decision`, `recommended_action`, `hard_blockers`, `architecture_decision`, `aix`,
 * `validation_errors`) plus an audit-safe record that never holds raw argument values.
 */
import { sha256Ref, tryCanonicalJson } from "../canonical-json/index.js";
import { formatIssue, type Issue } from "../issues/index.js";
import { strictestRoute, type Route } from "../route/index.js";
import { summarizeEvidence, type EvidenceSummary } from "./evidence.js";
import { inferContractRoute, type ContractReason } from "./infer.js";
import type {
  ContractAuthorizationState,
  ContractEvent,
  ContractRiskDomain,
  ContractToolCategory,
} from "./vocabulary.js";

/** At most this many argument names are kept in the audit record. */
export const MAX_AUDIT_ARGUMENT_KEYS = 64;

/** What the audit trail may keep about a checked event: labels and counts, never argument values. */
export interface ContractAudit {
  readonly event_valid: boolean;
  readonly schema_version: string | null;
  readonly request_id: string | null;
  readonly agent_id: string | null;
  readonly tool_name: string | null;
  readonly tool_category: ContractToolCategory | null;
  readonly authorization_state: ContractAuthorizationState | null;
  readonly risk_domain: ContractRiskDomain | null;
  readonly evidence: EvidenceSummary | null;
  /** Sorted top-level argument names (the first {@link MAX_AUDIT_ARGUMENT_KEYS}); never their values. */
  readonly proposed_argument_keys: readonly string[] | null;
  /** `sha256:` of the RFC 8785 canonical JSON of `proposed_arguments`; null only for an invalid event. */
  readonly proposed_arguments_hash: string | null;
}

/** The route the gate decided, why, and the two routes it was composed from. */
export interface ArchitectureDecision {
  readonly route: Route;
  readonly reasons: readonly ContractReason[];
  /** The contract's own route from category, authorization and evidence (refuse for an invalid event). */
  readonly inferred_route: Route;
  /** The runtime's `recommended_route` (null when the event is invalid). */
  readonly runtime_route: Route | null;
}

/** The envelope `checkToolPrecheck` returns. Key order is stable; fields may be added, never removed. */
export interface ContractEnvelope {
  readonly contract: "agent_action_contract_v1";
  readonly gate_decision: "pass" | "fail";
  readonly recommended_action: Route;
  readonly hard_blockers: readonly string[];
  readonly architecture_decision: ArchitectureDecision;
  readonly aix: { readonly hard_blockers: readonly string[] };
  readonly validation_errors: readonly Issue[];
  readonly audit: ContractAudit;
}

/** The top-level fields whose missing, mistyped or unknown value gets its own blocker. */
const FIELD_BLOCKERS: ReadonlyMap<unknown, string> = new Map([
  ["recommended_route", "unknown_route"],
  ["tool_category", "unknown_tool_category"],
  ["schema_version", "unsupported_schema_version"],
]);

function argumentsHash(args: ContractEvent["proposed_arguments"]): string | null {
  const canonical = tryCanonicalJson(args);
  return canonical.ok ? sha256Ref(canonical.value) : null;
}

function auditOf(event: ContractEvent, evidence: EvidenceSummary, hash: string): ContractAudit {
  return {
    event_valid: true,
    schema_version: event.schema_version ?? null,
    request_id: event.request_id ?? null,
    agent_id: event.agent_id ?? null,
    tool_name: event.tool_name,
    tool_category: event.tool_category,
    authorization_state: event.authorization_state,
    risk_domain: event.risk_domain,
    evidence,
    proposed_argument_keys: Object.keys(event.proposed_arguments).sort().slice(0, MAX_AUDIT_ARGUMENT_KEYS),
    proposed_arguments_hash: hash,
  };
}

const INVALID_AUDIT: ContractAudit = {
  event_valid: false,
  schema_version: null,
  request_id: null,
  agent_id: null,
  tool_name: null,
  tool_category: null,
  authorization_state: null,
  risk_domain: null,
  evidence: null,
  proposed_argument_keys: null,
  proposed_arguments_hash: null,
};

function assemble(
  route: Route,
  blockers: readonly string[],
  decision: ArchitectureDecision,
  issues: readonly Issue[],
  audit: ContractAudit,
): ContractEnvelope {
  const pass = route === "accept" && blockers.length === 0 && issues.length === 0;
  return {
    contract: "agent_action_contract_v1",
    gate_decision: pass ? "pass" : "fail",
    recommended_action: pass ? "accept" : strictestRoute(route, "ask"),
    hard_blockers: [...blockers],
    architecture_decision: decision,
    aix: { hard_blockers: [...blockers] },
    validation_errors: [...issues],
    audit,
  };
}

/**
 * The envelope for a schema-valid event: inferred route, then the stricter of it and the runtime's. An
 * event whose arguments have no canonical form (validation refuses those) is refused: an accept is
 * always bound to its arguments by `audit.proposed_arguments_hash`.
 */
export function decideContractEvent(event: ContractEvent): ContractEnvelope {
  const hash = argumentsHash(event.proposed_arguments);
  if (hash === null) {
    const message = "the arguments have no canonical form to bind the decision to";
    return refuseContractEnvelope([{ code: "contract_not_canonical", path: ["proposed_arguments"], message }]);
  }
  const inference = inferContractRoute(event);
  const runtime = event.recommended_route;
  const route = strictestRoute(inference.route, runtime);
  const blockers = [...inference.hard_blockers];
  const reasons = [...inference.reasons];
  if (runtime !== "accept") {
    blockers.push("runtime_route_not_accept");
    reasons.push({ code: "runtime_route_not_accept", message: `the runtime recommended \`${runtime}\`` });
  }
  const decision = { route, reasons, inferred_route: inference.route, runtime_route: runtime };
  return assemble(route, blockers, decision, [], auditOf(event, summarizeEvidence(inference.evidence), hash));
}

/**
 * The refuse envelope for an event that is not a valid v1 event (or could not be checked): blocker
 * `schema_invalid`, plus `unknown_route` / `unknown_tool_category` / `unsupported_schema_version` when
 * an issue is about `recommended_route` / `tool_category` / `schema_version` (missing, mistyped or
 * a value a v1 gate does not know), plus any `extraBlockers`.
 */
export function refuseContractEnvelope(
  issues: readonly Issue[],
  extraBlockers: readonly string[] = [],
): ContractEnvelope {
  const blockers = ["schema_invalid"];
  for (const issue of issues) {
    const blocker = issue.path.length === 1 ? FIELD_BLOCKERS.get(issue.path[0]) : undefined;
    if (blocker !== undefined && !blockers.includes(blocker)) blockers.push(blocker);
  }
  for (const extra of extraBlockers) if (!blockers.includes(extra)) blockers.push(extra);
  const first = issues[0];
  const detail =
    first === undefined ? "" : `: ${formatIssue(first)}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`;
  const reasons: ContractReason[] = [{ code: "schema_invalid", message: `the event is not a valid v1 event${detail}` }];
  const decision: ArchitectureDecision = { route: "refuse", reasons, inferred_route: "refuse", runtime_route: null };
  return assemble("refuse", blockers, decision, issues, INVALID_AUDIT);
}
