import type { SessionCode } from "./codes.js";
import type { SessionState } from "./state-machine.js";

/** What happened in a session. */
export type SessionEventType =
  | "session_created"
  | "state_changed"
  | "illegal_transition"
  | "intent_set"
  | "intent_updated"
  | "plan_submitted"
  | "plan_approved"
  | "plan_rejected"
  | "plan_invalidated"
  | "tokens_revoked"
  | "token_issued"
  | "token_refused"
  | "token_authorized"
  | "confirmation_asked"
  | "confirmation_answered"
  | "confirmation_refused"
  | "execution_recorded"
  | "execution_refused"
  | "tool_result_recorded"
  | "user_input_recorded"
  | "instructions_detected"
  | "provenance_incomplete"
  | "suspended"
  | "resumed"
  | "completed"
  | "terminated"
  | "error";

/**
 * One entry of a session's event log. Every entry names the tenant, session, intent version and plan hash at
 * the time, so an audit sink can correlate it with pipeline decisions.
 */
export interface SessionEvent {
  /** 1, 2, 3, … within the session. */
  readonly seq: number;
  /** ISO-8601 from the injected clock. */
  readonly at: string;
  readonly tenant: string;
  readonly session: string;
  readonly type: SessionEventType;
  /** The state after the event. */
  readonly state: SessionState;
  readonly intent_version: number | null;
  readonly plan_hash: string | null;
  /** For refusals and errors: the stable code. */
  readonly code?: SessionCode;
  /** One house-style line. */
  readonly message: string;
}
