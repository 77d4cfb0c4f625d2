import type { Redactor } from "../redaction/index.js";
import type { AuditEventInput, AuditMetadata } from "./event.js";

/** A string field as it is, anything else (null, absent, a value of the wrong type) as `null`. */
const stringOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

/**
 * Redacts `metadata`. A consent event's `consent_action` (the action its `consent_response` is signed over)
 * is kept only when redaction changes neither it nor the response: otherwise the log would hold a value
 * that no longer matches the signature, or a redacted value whose hash could be tested offline. It is
 * then `null`, and `consent_action_withheld: "redacted"` says why (nothing of the value is kept: its
 * `consent_action_hash` goes too). A hash that redaction alone would change is left out.
 */
function withholdConsentAction(metadata: AuditMetadata, redact: Redactor): AuditMetadata {
  const redacted = redact(metadata) as AuditMetadata;
  if (redacted === metadata || !("consent_action" in metadata) || metadata["consent_action"] === null) return redacted;
  const same =
    redacted["consent_action"] === metadata["consent_action"] &&
    redacted["consent_response"] === metadata["consent_response"];
  const { consent_action_hash: hash, ...rest } = redacted;
  if (!same) return { ...rest, consent_action: null, consent_action_withheld: "redacted" };
  return hash === metadata["consent_action_hash"] ? redacted : rest;
}

/**
 * Redacts an event input before it is hashed and written: the redactor runs over `metadata` (where
 * parameters go) and over the string fields. Returns the input unchanged (same reference) when nothing
 * matched, so the common case allocates nothing but one short array.
 *
 * The redactor is called twice, not once per field: once for `metadata`, once for the seven string
 * fields together, as an array (the redactor reads the known secrets once per call, and each call
 * costs about as much as redacting a short string it remembers). For a string, the redactor gives
 * the same result whether it is the value it was called on or an element of an array: strings are
 * redacted at any depth, the same way. Fields that are not strings are left as they are, as before
 * (they go into the array as `null`). `metadata` keeps its own call, so its depth limit counts from
 * the metadata object as before.
 */
export function redactAuditInput(input: AuditEventInput, redact: Redactor): AuditEventInput {
  const metadata = input.metadata === undefined ? undefined : withholdConsentAction(input.metadata, redact);
  const fields = [
    stringOrNull(input.request_id),
    stringOrNull(input.agent),
    stringOrNull(input.tool),
    stringOrNull(input.category),
    stringOrNull(input.risk_level),
    stringOrNull(input.decision),
    stringOrNull(input.policy_rule),
  ];
  let redacted = redact(fields);
  if (redacted !== fields && (!Array.isArray(redacted) || redacted.length !== fields.length)) {
    // a redactor that replaced the array whole (a depth limit below 1): the fields one by one, as before
    const each = fields.map((value) => (value === null ? null : redact(value)));
    redacted = each.every((value, i) => value === fields[i]) ? fields : each;
  }
  if (metadata === input.metadata && redacted === fields) return input;
  const out: { -readonly [K in keyof AuditEventInput]: AuditEventInput[K] } = { ...input };
  if (metadata !== input.metadata && metadata !== undefined) out.metadata = metadata;
  if (redacted !== fields) {
    // (a field that was not a string stays as it was: only strings are redacted)
    const [request_id, agent, tool, category, risk_level, decision, policy_rule] = redacted as (string | null)[];
    if (typeof input.request_id === "string") out.request_id = request_id as string;
    if (typeof input.agent === "string") out.agent = agent as string;
    if (typeof input.tool === "string") out.tool = tool as string;
    if (typeof input.category === "string") out.category = category as string;
    if (typeof input.risk_level === "string") out.risk_level = risk_level as string;
    if (typeof input.decision === "string") out.decision = decision as string;
    if (typeof input.policy_rule === "string") out.policy_rule = policy_rule as string;
  }
  return out;
}
