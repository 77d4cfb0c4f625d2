import type { Redactor } from "../redaction/index.js";
import type { AuditEventInput, AuditMetadata } from "./event.js";

const STRING_FIELDS = ["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const;

/**
 * Redacts an event input before it is hashed and written: the redactor runs over `metadata` (where
 * parameters go) and over the string fields. Returns the input unchanged (same reference) when nothing
 * matched, so the common case allocates nothing.
 */
export function redactAuditInput(input: AuditEventInput, redact: Redactor): AuditEventInput {
  let out: { -readonly [K in keyof AuditEventInput]: AuditEventInput[K] } | undefined;
  if (input.metadata !== undefined) {
    const metadata = redact(input.metadata);
    if (metadata !== input.metadata) (out ??= { ...input }).metadata = metadata as AuditMetadata;
  }
  for (const field of STRING_FIELDS) {
    const value = input[field];
    if (typeof value !== "string") continue;
    const next = redact(value);
    if (next !== value) (out ??= { ...input })[field] = next as string;
  }
  return out ?? input;
}
