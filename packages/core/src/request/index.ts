/**
 * The action request: everything the pipeline knows about one action an agent proposes.
 */
export { findUnreadableName } from "./name-characters.js";
export { findLookAlike, foldName, foldNameReadings, foldGlobPattern } from "./fold-name.js";
export { findWholeScriptLookAlike, type WholeScriptLookAlike } from "./whole-script.js";

/** Action categories of the consent protocol §5.3. */
export const CATEGORIES = ["read", "write", "communication", "financial", "system", "public", "physical"] as const;
export type Category = (typeof CATEGORIES)[number];

/** Risk levels of the consent protocol §4.1. */
export const RISK_LEVELS = ["low", "medium", "high", "critical"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** MCP tool annotations (hints from the server; never trusted to loosen a decision on their own). */
export interface ToolAnnotations {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** A trusted-channel attestation: HMAC-SHA256 over the canonical request, with a timestamp. */
export interface TrustedChannelAttestation {
  /** Identifier of the configured key that signed. */
  readonly key_id: string;
  /** ISO-8601 time the attestation was made. */
  readonly timestamp: string;
  /** Lowercase hex HMAC-SHA256. */
  readonly hmac: string;
}

/** What a consent-graph self-modification proposal carries. */
export interface GraphProposal {
  /** Explicit before/after diff; required where the domain has `require_diff`. */
  readonly diff?: string;
  /** How to undo the change; required where the domain has `undo_window_days`. */
  readonly undo?: string;
  /** ISO-8601 time the proposal was made (the cooling period counts from here). */
  readonly proposed_at?: string;
}

/** The consent-graph coordinates of an action, given explicitly or found by the graph mapping. */
export interface GraphTarget {
  readonly domain: string;
  readonly action: string;
  /** The agent's confidence in [0, 1]; absent means 0 (FORCED for requires_approval). */
  readonly confidence?: number;
  readonly attestation?: TrustedChannelAttestation;
  readonly proposal?: GraphProposal;
}

/** One proposed action, as every front end hands it to the pipeline. */
export interface ActionRequest {
  readonly tool: string;
  readonly server?: string;
  readonly agent?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Explicit category (wins over policy, annotations and the built-in table). */
  readonly category?: Category;
  /** Explicit risk level. */
  readonly risk_level?: RiskLevel;
  readonly annotations?: ToolAnnotations;
  /** Consent-graph coordinates; when absent the graph mapping may supply them. */
  readonly graph?: GraphTarget;
  /** An Agent Action Contract v1 event, when the caller speaks the contract. */
  readonly contract?: unknown;
}
