/**
 * The JSON schema of the `/pre-tool-check` 200 answer (the contract envelope plus the pipeline's
 * summary): shown in the OpenAPI document and compiled into the answer's serializer. Properties are
 * listed in the order the envelope's objects are built, so the serializer writes what `JSON.stringify`
 * writes (a test holds the two equal); each property list is checked against its TypeScript interface,
 * so a field added to the envelope does not compile until it is described here.
 */
import type {
  ArchitectureDecision,
  ContractAudit,
  ContractEnvelope,
  ContractReason,
  EvidenceSummary,
  Reason,
} from "@acp/core";
import type { PipelineSummary, PreToolCheckEnvelope } from "../service/merge-envelope.js";
import { ROUTE_ENUM } from "./schemas.js";

type Properties<T> = Record<keyof T, Record<string, unknown>>;

const STRING = { type: "string" } as const;
const STRING_OR_NULL = { type: ["string", "null"] } as const;
const ROUTE = { type: "string", enum: ROUTE_ENUM } as const;
const STRINGS = { type: "array", items: STRING } as const;
// counts are integers; `number` so the serializer writes any number as JSON.stringify would
const COUNT = { type: "number" } as const;

const CONTRACT_REASON = {
  type: "object",
  properties: { code: STRING, message: STRING } satisfies Properties<ContractReason>,
} as const;

const ARCHITECTURE_DECISION = {
  type: "object",
  properties: {
    route: ROUTE,
    reasons: { type: "array", items: CONTRACT_REASON },
    inferred_route: ROUTE,
    runtime_route: { type: ["string", "null"], enum: [...ROUTE_ENUM, null] },
  } satisfies Properties<ArchitectureDecision>,
} as const;

const EVIDENCE = {
  type: "object",
  properties: {
    total: COUNT,
    string_refs: COUNT,
    structured_refs: COUNT,
    usable: COUNT,
    stale: COUNT,
    unverified: COUNT,
    sensitive: COUNT,
    verified_fresh: COUNT,
  } satisfies Properties<EvidenceSummary>,
} as const;

const AUDIT = {
  type: "object",
  description: "what the audit trail keeps about the event: labels and counts, never argument values",
  properties: {
    event_valid: { type: "boolean" },
    schema_version: STRING_OR_NULL,
    request_id: STRING_OR_NULL,
    agent_id: STRING_OR_NULL,
    tool_name: STRING_OR_NULL,
    tool_category: STRING_OR_NULL,
    authorization_state: STRING_OR_NULL,
    risk_domain: STRING_OR_NULL,
    evidence: { anyOf: [{ type: "null" }, EVIDENCE] },
    proposed_argument_keys: { anyOf: [{ type: "null" }, STRINGS] },
    proposed_arguments_hash: STRING_OR_NULL,
  } satisfies Properties<ContractAudit>,
} as const;

const PIPELINE_REASON = {
  type: "object",
  properties: {
    source: STRING,
    code: STRING,
    message: STRING,
    rule: STRING,
  } satisfies Properties<Reason>,
} as const;

const PIPELINE_SUMMARY = {
  type: "object",
  description: "the pipeline's own decision (policy rules, consent graph), merged into the envelope",
  properties: {
    decision_id: STRING,
    route: ROUTE,
    rule: STRING_OR_NULL,
    reasons: { type: "array", items: PIPELINE_REASON },
    policy_hash: {
      type: "string",
      pattern: "^sha256:[0-9a-f]{64}$",
      description:
        "the policy version decided by: sha256 of the policy file's bytes (`acp serve` reloads an edited file)",
    },
  } satisfies Properties<PipelineSummary>,
} as const;

const ENVELOPE_PROPERTIES = {
  contract: { type: "string", enum: ["agent_action_contract_v1"] },
  gate_decision: { type: "string", enum: ["pass", "fail"] },
  recommended_action: ROUTE,
  hard_blockers: STRINGS,
  architecture_decision: ARCHITECTURE_DECISION,
  aix: { type: "object", properties: { hard_blockers: STRINGS } satisfies Properties<ContractEnvelope["aix"]> },
  // empty in a 200 answer (an invalid event is a 400); written as JSON.stringify writes it
  validation_errors: { type: "array", items: {} },
  audit: AUDIT,
  decision: PIPELINE_SUMMARY,
} as const satisfies Properties<PreToolCheckEnvelope>;

/** The 200 answer of `/pre-tool-check`. */
export const PRE_TOOL_CHECK_ANSWER = {
  description: "the decision envelope",
  type: "object",
  properties: ENVELOPE_PROPERTIES,
} as const;
