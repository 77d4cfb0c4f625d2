/** What can be wrong with an audit log; stable codes listed in docs/reference/errors.md. */
export type AuditProblemCode =
  | "not_json"
  | "schema_invalid"
  | "not_canonical"
  | "hash_mismatch"
  | "broken_link"
  | "inserted"
  | "reordered"
  | "checkpoint_mismatch"
  | "bad_checkpoint_signature"
  | "consent_signature_invalid"
  | "truncated_after_checkpoint"
  | "anchor_missing";

/** Every {@link AuditProblemCode} with what it means, in the order the verifier checks a line. */
export const AUDIT_PROBLEMS: readonly { readonly code: AuditProblemCode; readonly meaning: string }[] = [
  {
    code: "not_json",
    meaning: "a line is not a JSON object (or is longer than 1 MiB, or not valid UTF-8); often a torn last line",
  },
  { code: "schema_invalid", meaning: "a line is JSON but not a §7.4 audit event (missing, unknown or mistyped field)" },
  { code: "hash_mismatch", meaning: "a line's `event_hash` is not the hash of its content: the line was edited" },
  { code: "not_canonical", meaning: "a line's bytes are not the RFC 8785 form its hash was computed over" },
  { code: "broken_link", meaning: "`previous_event_hash` names no event of the log: a line was removed or inserted" },
  {
    code: "inserted",
    meaning:
      "the line after a line names the one before it: the line between was inserted (or the next forks the chain)",
  },
  { code: "reordered", meaning: "`previous_event_hash` names another line of the log: lines were moved or duplicated" },
  {
    code: "checkpoint_mismatch",
    meaning: "a checkpoint's head hash or count does not match its place, or the log differs from the anchor",
  },
  {
    code: "bad_checkpoint_signature",
    meaning: "a checkpoint is not signed by the given public key: forged or re-signed",
  },
  {
    code: "consent_signature_invalid",
    meaning:
      "a consent event's signed `consent_response` does not verify with the public key against its `consent_action`",
  },
  {
    code: "truncated_after_checkpoint",
    meaning: "the log ends before the latest signed checkpoint kept beside it: events were cut",
  },
  {
    code: "anchor_missing",
    meaning: "no anchor beside a log that had one (its .anchored marker, or the home's log with checkpoints)",
  },
];
