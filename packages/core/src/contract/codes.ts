/** Every stable code the action contract emits; docs/reference/errors.md lists each (a test checks). */

/** Codes of validation issues (`validation_errors[].code`). */
export const CONTRACT_ISSUE_CODES = [
  "contract_not_object",
  "contract_not_json",
  "contract_malformed_json",
  "contract_duplicate_key",
  "contract_too_large",
  "contract_missing_field",
  "contract_unknown_field",
  "contract_wrong_type",
  "contract_empty_string",
  "contract_invalid_value",
  "contract_invalid",
  "contract_too_many_issues",
  "contract_not_canonical",
  "contract_unsafe_integer",
  "unknown_tool_category",
  "unknown_authorization_state",
  "unknown_risk_domain",
  "unknown_route",
  "unsupported_schema_version",
  "check_failed",
] as const;

/** Codes of hard blockers (`hard_blockers[]`); each blocks execution. */
export const CONTRACT_HARD_BLOCKERS = [
  "schema_invalid",
  "unknown_route",
  "unknown_tool_category",
  "unsupported_schema_version",
  "check_failed",
  "missing_authorization_for_private_read",
  "missing_authorization_for_write",
  "missing_confirmation_for_write",
  "insufficient_evidence",
  "sensitive_evidence_for_public_read",
  "runtime_route_not_accept",
] as const;

/** Codes of reasons that explain without blocking (`architecture_decision.reasons[].code`). */
export const CONTRACT_INFO_REASONS = [
  "public_read_allowed",
  "private_read_authenticated",
  "write_confirmed",
  "evidence_not_counted",
  "sensitive_evidence_ref",
] as const;
