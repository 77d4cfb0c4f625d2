// The audit writer's code path as it was before 26 Nov 2026 (commit 37746fa), kept only for
// record-equivalence.test.ts, which holds the current code to the same bytes and hashes. Not used by ACP.
import type { Redactor } from "../../../src/redaction/index.js";
import type { AuditEventInput, AuditMetadata } from "../../../src/audit/event.js";

/** A string field redacted; anything else (null, absent) as it is. */
function redactField<T>(value: T, redact: Redactor): T {
  return typeof value === "string" ? (redact(value) as T) : value;
}

/**
 * Redacts an event input before it is hashed and written: the redactor runs over `metadata` (where
 * parameters go) and over the string fields. Returns the input unchanged (same reference) when nothing
 * matched, so the common case allocates nothing. (The fields are read one by one by name: one shape
 * of property access per field, where a loop over their names makes every read a keyed lookup.)
 */
export function redactAuditInput(input: AuditEventInput, redact: Redactor): AuditEventInput {
  const metadata = input.metadata === undefined ? undefined : (redact(input.metadata) as AuditMetadata);
  const request_id = redactField(input.request_id, redact);
  const agent = redactField(input.agent, redact);
  const tool = redactField(input.tool, redact);
  const category = redactField(input.category, redact);
  const risk_level = redactField(input.risk_level, redact);
  const decision = redactField(input.decision, redact);
  const policy_rule = redactField(input.policy_rule, redact);
  if (
    metadata === input.metadata &&
    request_id === input.request_id &&
    agent === input.agent &&
    tool === input.tool &&
    category === input.category &&
    risk_level === input.risk_level &&
    decision === input.decision &&
    policy_rule === input.policy_rule
  )
    return input;
  const out: { -readonly [K in keyof AuditEventInput]: AuditEventInput[K] } = { ...input };
  if (metadata !== input.metadata && metadata !== undefined) out.metadata = metadata;
  if (request_id !== input.request_id && request_id !== undefined) out.request_id = request_id;
  if (agent !== input.agent && agent !== undefined) out.agent = agent;
  if (tool !== input.tool && tool !== undefined) out.tool = tool;
  if (category !== input.category && category !== undefined) out.category = category;
  if (risk_level !== input.risk_level && risk_level !== undefined) out.risk_level = risk_level;
  if (decision !== input.decision && decision !== undefined) out.decision = decision;
  if (policy_rule !== input.policy_rule && policy_rule !== undefined) out.policy_rule = policy_rule;
  return out;
}
