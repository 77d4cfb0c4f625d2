import type { JsonValue } from "../canonical-json/index.js";
import type { RiskLevel } from "../request/index.js";

/** The consent protocol version these messages carry (§4). */
export const CONSENT_PROTOCOL_VERSION = "0.2.0";

/** The decisions a human can give (§4.2). */
export const CONSENT_DECISIONS = ["approved", "denied", "approved_with_modifications"] as const;
export type ConsentDecisionV02 = (typeof CONSENT_DECISIONS)[number];

/** The channels an approver answers through (§4.2). */
/**
 * §4.2 names telegram, terminal and webhook; ACP adds `cli` (`acp approve`), `console` (the web console) and
 * `app` (the program's own dialog: the in-process guard's `ask` callback).
 */
export const CONSENT_CHANNELS = ["telegram", "terminal", "webhook", "cli", "console", "app"] as const;
export type ConsentChannelV02 = (typeof CONSENT_CHANNELS)[number];

/** A JSON object of tool-call parameters. */
export type JsonObject = { readonly [key: string]: JsonValue };

/** The agent that proposed the action (§4.1). */
export interface ConsentAgentV02 {
  readonly id: string;
  readonly name: string;
  readonly command: string;
}

/** The action put before the human (§4.1). */
export interface ConsentActionV02 {
  readonly tool: string;
  readonly server: string;
  readonly category: string;
  readonly risk_level: RiskLevel;
  readonly parameters: JsonObject;
  readonly description: string;
}

/** The policy rule that asked (§4.1). */
export interface ConsentPolicyRefV02 {
  readonly rule_id: string;
  readonly rule_name: string;
  readonly required_level: string;
}

/** A consent request, exactly §4.1. */
export interface ConsentRequestV02 {
  readonly type: "consent_request";
  readonly version: typeof CONSENT_PROTOCOL_VERSION;
  /** `cr_<unique_id>`. */
  readonly id: string;
  /** ISO-8601 (RFC 3339) time. */
  readonly timestamp: string;
  readonly expires_at: string;
  readonly agent: ConsentAgentV02;
  readonly action: ConsentActionV02;
  readonly policy: ConsentPolicyRefV02;
  /** `n_<uuid>`, lowercase. */
  readonly nonce: string;
}

/** Who answered, and through which channel (§4.2). */
export interface ConsentApproverV02 {
  readonly id: string;
  readonly channel: ConsentChannelV02;
}

/** Approval scopes (an ACP extension of §4.2): this call, this session, or a time window. */
export const CONSENT_SCOPES = ["once", "session", "window"] as const;
export type ConsentScopeV02 = (typeof CONSENT_SCOPES)[number];

/**
 * The conditions attached to an answer (§4.2). Without `scope` (or with `scope: "once"`) the approval is
 * single use, exactly as §4.2. ACP's extension: `scope: "session"` (with `session_id`) or `"window"` marks an
 * approval a person chose to reuse until `valid_until`; then `single_use` is false, and the scope is signed
 * (see `signingPayloadOf`).
 */
export interface ConsentConditionsV02 {
  readonly valid_until: string;
  readonly single_use: boolean;
  readonly scope?: ConsentScopeV02;
  readonly session_id?: string;
}

/** The Ed25519 proof over the signing payload (§4.2, §6). */
export interface ConsentProofV02 {
  readonly algorithm: "Ed25519";
  /** Raw 32-byte public key, 64 lowercase hex digits. */
  readonly public_key: string;
  /** Raw 64-byte signature, 128 lowercase hex digits. */
  readonly signature: string;
  /** `sha256:` + lowercase hex SHA-256 of the JCS payload bytes. */
  readonly signed_payload_hash: string;
}

/**
 * A consent response, exactly §4.2. `modifications`, when not null, are parameter overrides: the
 * approved parameters are the request's parameters with these top-level keys replaced or added.
 */
export interface ConsentResponseV02 {
  readonly type: "consent_response";
  readonly version: typeof CONSENT_PROTOCOL_VERSION;
  readonly request_id: string;
  readonly timestamp: string;
  readonly decision: ConsentDecisionV02;
  readonly approver: ConsentApproverV02;
  readonly modifications: JsonObject | null;
  readonly conditions: ConsentConditionsV02;
  readonly nonce: string;
  readonly proof: ConsentProofV02;
}

/** The action an approval is bound to: the hash input of `action_hash` (§6.2). */
export interface ApprovedAction {
  readonly server: string;
  readonly tool: string;
  readonly parameters: JsonObject;
}
