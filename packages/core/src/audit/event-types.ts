/**
 * The audit event types: every type of the consent protocol §7.3, then the ones ACP adds.
 * One list, so the writer, the verifier and the docs agree on what may appear in `audit.jsonl`.
 */
export const AUDIT_EVENT_TYPES = [
  // §7.3
  "tool_call_intercepted",
  "policy_evaluated",
  "consent_requested",
  "consent_approved",
  "consent_denied",
  "consent_expired",
  "tool_call_forwarded",
  "tool_call_completed",
  "credential_injected",
  // ACP additions
  "tool_call_refused",
  "tool_call_failed",
  "consent_withdrawn",
  "proof_rejected",
  "policy_error",
  "audit_recovered",
  "checkpoint",
  // the proxy
  "upstream_failed",
  "tool_definition_changed",
  // the sandbox of `acp run`
  "sandbox_started",
  "sandbox_exited",
  "sandbox_egress",
  "sandbox_egress_refused",
  // a person's signed intent update to a live session (`acp intent set`)
  "intent_updated",
  "intent_update_refused",
  // a running `acp proxy` / `acp serve` picking up an edited policy file (or keeping the old one)
  "policy_reloaded",
  "policy_reload_refused",
  // the session runtime of `acp proxy` and `openGuard`: instructions read, provenance incomplete, suspended, …
  "session_event",
] as const;

/** One audit event type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

const TYPES: ReadonlySet<string> = new Set(AUDIT_EVENT_TYPES);

/** Whether a value is one of {@link AUDIT_EVENT_TYPES}. */
export function isAuditEventType(value: unknown): value is AuditEventType {
  return typeof value === "string" && TYPES.has(value);
}
