/**
 * Every code the consent graph emits — outcome reasons and validation/lint issues — with its meaning.
 * docs/reference/errors.md ("Consent graph") lists the same codes.
 */

/** One code and what it means. */
export interface GraphCode {
  readonly code: string;
  readonly meaning: string;
}

/** Reason codes of graph outcomes. */
export const GRAPH_REASON_CODES: readonly GraphCode[] = [
  { code: "autonomous_action", meaning: "AUTONOMOUS: the action is in the autonomous tier (execute and log)" },
  {
    code: "visible_notify",
    meaning: "VISIBLE: requires approval, confidence at or above the threshold (proceed and notify)",
  },
  {
    code: "approval_required",
    meaning: "FORCED: requires approval, confidence below the threshold or absent (ask first)",
  },
  { code: "blocked_action", meaning: "BLOCKED: the action is in the blocked tier (refuse and alert)" },
  { code: "unclassified_domain", meaning: "BLOCKED: the domain is not in the graph" },
  { code: "unclassified_action", meaning: "BLOCKED: the action is in none of the domain's tiers" },
  { code: "invalid_confidence", meaning: "BLOCKED: confidence is not a number from 0 to 1" },
  { code: "invalid_input", meaning: "BLOCKED: the target, graph, threshold or clock is malformed" },
  { code: "graph_error", meaning: "BLOCKED / refuse: an internal error while parsing, linting or checking the graph" },
  { code: "trusted_channel_required", meaning: "BLOCKED: a trusted-channel action arrived without an attestation" },
  { code: "attestation_invalid", meaning: "BLOCKED: the attestation is malformed or its HMAC does not verify" },
  { code: "attestation_unknown_key", meaning: "BLOCKED: the attestation names a key that is not configured" },
  { code: "attestation_stale", meaning: "BLOCKED: the attestation's timestamp is outside the allowed window" },
  {
    code: "attestation_replayed",
    meaning: "BLOCKED: the attestation was already used for a request (each is good for one), or could not be checked",
  },
  { code: "trusted_channel_verified", meaning: "note: the trusted-channel attestation verified" },
  { code: "diff_required", meaning: "BLOCKED: `require_diff` holds and the proposal has no explicit diff" },
  { code: "undo_required", meaning: "BLOCKED: `undo_window_days` holds and the proposal has no undo path" },
  {
    code: "proposed_at_required",
    meaning: "BLOCKED: a cooling period holds and the proposal has no valid `proposed_at`",
  },
  {
    code: "proposed_at_mismatch",
    meaning:
      "note: the proposal's `proposed_at` is more than the clock skew from when ACP first saw it; the cooling period counts from the later",
  },
  { code: "cooling_period", meaning: "FORCED, deferred: the proposal is inside its cooling period (`deferred_until`)" },
  { code: "cooling_period_elapsed", meaning: "note: the proposal's cooling period is over" },
  { code: "consent_decayed", meaning: "note: the autonomous tier decayed to requires approval (no review in time)" },
];

/** Issue codes of parsing, validation, lint, mapping and the review record. */
export const GRAPH_ISSUE_CODES: readonly GraphCode[] = [
  {
    code: "graph_unreadable",
    meaning: "the graph file is there and cannot be read (a directory, no permission): an I/O error, CLI exit 1",
  },
  { code: "json_syntax", meaning: "the graph is not valid JSON (with line and column)" },
  { code: "duplicate_key", meaning: "a JSON object repeats a key" },
  { code: "graph_too_large", meaning: "the graph text or one list is larger than the limit" },
  { code: "graph_too_deep", meaning: "the JSON nests deeper than the limit" },
  { code: "invalid_type", meaning: "a value has the wrong type" },
  { code: "invalid_value", meaning: "a value is out of range or not one of the allowed words" },
  { code: "invalid_name", meaning: "a domain or action name has characters outside the allowed set" },
  { code: "missing_key", meaning: "a required key is missing (`consent_decay.review_interval_days`)" },
  { code: "unknown_key", meaning: "a key the format does not define (with a suggestion)" },
  { code: "action_in_several_tiers", meaning: "lint: an action is listed in more than one tier" },
  { code: "duplicate_action", meaning: "lint: an action is listed twice in one tier" },
  { code: "missing_tier", meaning: "lint: a domain lacks one of the three tier lists" },
  { code: "empty_domain", meaning: "lint: a domain classifies no action" },
  { code: "empty_graph", meaning: "lint: the graph has no domains" },
  { code: "trusted_channel_unclassified", meaning: "lint: a `trusted_channel_required` action is in no tier" },
  { code: "invalid_mapping", meaning: "the graph mapping (config `graph.mapping`) is malformed" },
  { code: "invalid_glob", meaning: "a mapping `server`, `tool` or refinement glob does not compile" },
  { code: "unknown_domain", meaning: "`acp graph review` names a domain the graph does not have" },
  {
    code: "review_record_unreadable",
    meaning:
      "the review record file is there and cannot be read (a directory, no permission): an I/O error, CLI exit 1",
  },
  { code: "invalid_review_record", meaning: "the review record file is oversized or malformed" },
];
