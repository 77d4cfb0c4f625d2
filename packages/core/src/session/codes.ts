/**
 * Every code the session runtime emits — thrown {@link SessionError}s, validation issues, verdict reasons and
 * authority-token refusals — with its meaning. `docs/reference/errors.md` § "Session runtime" lists exactly these
 * (a test keeps the two in step).
 */
export const SESSION_CODES = [
  // Thrown errors (SessionError.code).
  { code: "illegal_transition", meaning: "the operation is not legal in the session's current state" },
  { code: "invalid_intent", meaning: "the intent failed validation; the issues say where" },
  { code: "invalid_plan", meaning: "the plan failed validation or does not fit the intent; the issues say where" },
  { code: "invalid_session_config", meaning: "the session configuration is malformed (key, budgets, transitions, …)" },
  {
    code: "intent_version_conflict",
    meaning: "an intent update carries a version other than the current one plus one",
  },
  { code: "confirmation_required", meaning: "the operation needs a confirmation from the escalation handler" },
  {
    code: "confirmation_invalid",
    meaning: "the confirmation was not produced by this session's handler for this exact question, or was used already",
  },
  { code: "confirmation_denied", meaning: "the person declined (or the handler gave no answer)" },
  { code: "plan_required", meaning: "the session requires an approved plan before execution" },
  { code: "authority_refused", meaning: "no authority token was issued: the session refuses the call" },
  { code: "execution_not_permitted", meaning: "a call was recorded as executed although the session refuses it" },
  { code: "invalid_record", meaning: "a recorded user input, tool result or execution is malformed" },
  { code: "event_sink_failed", meaning: "the `onEvent` hook threw; the session event was kept in `session.events`" },
  { code: "cross_tenant", meaning: "a tenant asked for a session (or presented a token) of another tenant" },
  { code: "unknown_session", meaning: "the session directory holds no session with that id" },
  { code: "duplicate_session", meaning: "the session directory already holds a session with that id" },
  // Validation issues.
  {
    code: "not_plain_json",
    meaning: "the intent or plan is not plain JSON (functions, cycles, non-finite numbers, …)",
  },
  { code: "intent_schema_violation", meaning: "the intent does not match `spec/schemas/intent.schema.json`" },
  { code: "plan_schema_violation", meaning: "the plan does not match `spec/schemas/plan.schema.json`" },
  { code: "invalid_action_pattern", meaning: "an action glob does not compile" },
  { code: "plan_step_pattern", meaning: "a plan step names a glob; steps name one concrete action" },
  { code: "plan_step_not_allowed", meaning: "a plan step's action is outside the intent's `allowed_actions`" },
  { code: "plan_step_forbidden", meaning: "a plan step's action matches the intent's `forbidden_actions`" },
  { code: "unknown_trusted_list", meaning: "a `from_trusted` constraint names a list the intent does not have" },
  { code: "invalid_constraint", meaning: "an argument constraint is malformed (bad glob)" },
  { code: "plan_intent_mismatch", meaning: "the plan names an intent version other than the current one" },
  { code: "invalid_transition_rule", meaning: "a transition rule is malformed (`from`, `to` or `action`)" },
  // Verdict reasons (source "session").
  { code: "session_ok", meaning: "reason: within the intent (and the approved plan); nothing raised the stakes" },
  { code: "session_not_executing", meaning: "reason: the session is not executing (no intent, or plan not approved)" },
  { code: "session_suspended", meaning: "reason: the kill switch suspended the session until a person resumes it" },
  { code: "session_terminated", meaning: "reason: the session was terminated" },
  { code: "session_completed", meaning: "reason: the session completed" },
  { code: "intent_forbidden", meaning: "reason: the action matches the intent's `forbidden_actions`" },
  {
    code: "intent_not_allowed",
    meaning: "reason: the action is outside the intent's `allowed_actions` (default deny)",
  },
  { code: "intent_confirm", meaning: "reason: the intent lists the action under `confirm_actions`" },
  {
    code: "not_in_plan",
    meaning: "reason: no step of the approved plan names the action (refuse or ask per `off_plan`)",
  },
  { code: "plan_constraint_failed", meaning: "reason: a plan step names the action but its argument constraints fail" },
  { code: "budget_exhausted", meaning: "reason: the intent's `max_calls` budget is spent" },
  { code: "consequential_budget_exhausted", meaning: "reason: the intent's `max_consequential_calls` is spent" },
  { code: "action_budget_exhausted", meaning: "reason: the intent's per-action cap for this action is spent" },
  { code: "transition_denied", meaning: "reason: a transition rule denies this action after an earlier call" },
  { code: "transition_ask", meaning: "reason: a transition rule asks a person for this action after an earlier call" },
  {
    code: "provenance_tainted",
    meaning:
      "reason: a consequential call (or a read, with `reads.tainted_arguments: ask`) carries a value found only in untrusted content; a person is asked",
  },
  {
    code: "provenance_unknown",
    meaning:
      "reason: a consequential call carries a value no user input, trusted value or tool result holds (provenance `unknown: ask`); a person is asked",
  },
  {
    code: "instruction_source",
    meaning: "reason: a consequential call carries a value from content that reads like instructions",
  },
  {
    code: "instructions_seen",
    meaning:
      "reason: instruction-like untrusted content was read earlier (`escalate_after_instructions`; for reads, `reads.after_instructions: ask`)",
  },
  {
    code: "provenance_incomplete",
    meaning:
      "reason: some content the agent read could not be tracked whole (too large, or unreadable), so consequential calls ask",
  },
  // Authority-token refusals (authorize).
  { code: "token_malformed", meaning: "the authority token is not a well-formed token" },
  { code: "token_forged", meaning: "the authority token's signature does not verify" },
  { code: "token_unknown", meaning: "the token verifies but this session never issued it" },
  { code: "token_reused", meaning: "the single-use authority token was used already" },
  { code: "token_expired", meaning: "the authority token's TTL has passed" },
  { code: "token_revoked", meaning: "the token was revoked (intent update, plan invalidation or termination)" },
  { code: "token_wrong_tenant", meaning: "the token belongs to another tenant" },
  { code: "token_wrong_session", meaning: "the token belongs to another session" },
  { code: "token_wrong_action", meaning: "the token was issued for another action" },
  { code: "token_wrong_arguments", meaning: "the request's arguments differ from those the token was issued for" },
] as const;

/** One stable session code. */
export type SessionCode = (typeof SESSION_CODES)[number]["code"];

/** The meaning of a code, as `docs/reference/errors.md` gives it. */
export function describeSessionCode(code: SessionCode): string {
  return SESSION_CODES.find((entry) => entry.code === code)?.meaning ?? code;
}
