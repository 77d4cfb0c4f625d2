/**
 * The words of the Agent Action Contract v1: its enums and the event shape, exactly as the document
 * names them. Every list is ordered as the document orders it.
 */
import type { Route } from "../route/index.js";

/** The only schema version a v1 gate negotiates; any other value fails closed. */
export const CONTRACT_SCHEMA_VERSION = "aana.agent_tool_precheck.v1";

/** The canonical `$id` of the v1 JSON Schema. */
export const CONTRACT_SCHEMA_ID = "https://aana.dev/schemas/agent_action_contract_v1.schema.json";

/** The seven required public fields, in the document's frozen order. */
export const CONTRACT_REQUIRED_FIELDS = [
  "tool_name",
  "tool_category",
  "authorization_state",
  "evidence_refs",
  "risk_domain",
  "proposed_arguments",
  "recommended_route",
] as const;

/** Consequence classes of a proposed tool call. */
export const CONTRACT_TOOL_CATEGORIES = ["public_read", "private_read", "write", "unknown"] as const;
export type ContractToolCategory = (typeof CONTRACT_TOOL_CATEGORIES)[number];

/** Authorization states, weakest first: `none < user_claimed < authenticated < validated < confirmed`. */
export const CONTRACT_AUTHORIZATION_STATES = [
  "none",
  "user_claimed",
  "authenticated",
  "validated",
  "confirmed",
] as const;
export type ContractAuthorizationState = (typeof CONTRACT_AUTHORIZATION_STATES)[number];

/** Primary risk surfaces. */
export const CONTRACT_RISK_DOMAINS = [
  "devops",
  "finance",
  "education",
  "hr",
  "legal",
  "pharma",
  "healthcare",
  "commerce",
  "customer_support",
  "security",
  "research",
  "personal_productivity",
  "public_information",
  "unknown",
] as const;
export type ContractRiskDomain = (typeof CONTRACT_RISK_DOMAINS)[number];

/** What kind of record a structured evidence ref points at. */
export const EVIDENCE_KINDS = [
  "user_message",
  "assistant_message",
  "tool_result",
  "policy",
  "auth_event",
  "approval",
  "system_state",
  "audit_record",
  "other",
] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** How far an evidence ref can be trusted. */
export const EVIDENCE_TRUST_TIERS = ["verified", "runtime", "user_claimed", "unverified", "unknown"] as const;
export type EvidenceTrustTier = (typeof EVIDENCE_TRUST_TIERS)[number];

/** Whether an evidence ref is safe to publish. */
export const EVIDENCE_REDACTION_STATUSES = ["public", "redacted", "sensitive", "unknown"] as const;
export type EvidenceRedactionStatus = (typeof EVIDENCE_REDACTION_STATUSES)[number];

/** Whether an evidence ref is current. */
export const EVIDENCE_FRESHNESS_STATUSES = ["fresh", "stale", "unknown"] as const;
export type EvidenceFreshnessStatus = (typeof EVIDENCE_FRESHNESS_STATUSES)[number];

/** Kinds of subject whose authorization was checked (optional compatibility field). */
export const AUTHORIZATION_SUBJECT_TYPES = [
  "user",
  "account",
  "client",
  "employee",
  "student",
  "patient",
  "case",
  "service",
  "unknown",
] as const;
export type AuthorizationSubjectType = (typeof AUTHORIZATION_SUBJECT_TYPES)[number];

/** A production evidence ref. Missing `trust_tier`, `redaction_status` or `freshness` mean `unknown`. */
export interface StructuredEvidenceRef {
  readonly source_id: string;
  readonly kind: EvidenceKind;
  readonly trust_tier?: EvidenceTrustTier;
  readonly redaction_status?: EvidenceRedactionStatus;
  readonly summary?: string;
  readonly freshness?: { readonly status: EvidenceFreshnessStatus };
  readonly provenance?: string;
  readonly retrieved_at?: string;
  readonly citation_url?: string;
  readonly retrieval_url?: string;
  readonly supports?: readonly string[];
  readonly contradicts?: readonly string[];
}

/** An evidence ref: a non-empty string (quickstarts) or a structured ref (production). */
export type EvidenceRef = string | StructuredEvidenceRef;

/** The redacted subject whose authorization was checked. */
export interface AuthorizationSubject {
  readonly subject_type?: AuthorizationSubjectType;
  readonly subject_ref?: string;
}

/** A schema-valid Agent Action Contract v1 event. */
export interface ContractEvent {
  readonly schema_version?: typeof CONTRACT_SCHEMA_VERSION;
  readonly tool_name: string;
  readonly tool_category: ContractToolCategory;
  readonly authorization_state: ContractAuthorizationState;
  readonly evidence_refs: readonly EvidenceRef[];
  readonly risk_domain: ContractRiskDomain;
  readonly proposed_arguments: Readonly<Record<string, unknown>>;
  readonly recommended_route: Route;
  readonly request_id?: string;
  readonly agent_id?: string;
  readonly user_intent?: string;
  readonly authorization_subject?: AuthorizationSubject;
}

/** The rank of an authorization state: none 0 … confirmed 4. */
export function authorizationRank(state: ContractAuthorizationState): number {
  return CONTRACT_AUTHORIZATION_STATES.indexOf(state);
}
