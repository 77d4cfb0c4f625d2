/**
 * The session state machine, as data. Every operation of a session names the transition it makes; a
 * transition not in {@link SESSION_TRANSITIONS} throws `illegal_transition` and is recorded.
 */

/** The states of a session. `completed` and `terminated` are final. */
export const SESSION_STATES = [
  "created",
  "intent_set",
  "plan_submitted",
  "plan_approved",
  "executing",
  "suspended",
  "completed",
  "terminated",
] as const;

/** One session state. */
export type SessionState = (typeof SESSION_STATES)[number];

/** The operations that move a session. */
export type SessionOperation =
  | "set_intent"
  | "update_intent"
  | "submit_plan"
  | "approve_plan"
  | "reject_plan"
  | "start"
  | "suspend"
  | "resume"
  | "complete"
  | "terminate";

/** One legal transition: in `from`, `operation` moves the session to `to`. */
export interface SessionTransition {
  readonly from: SessionState;
  readonly operation: SessionOperation;
  readonly to: SessionState;
}

const LIVE: readonly SessionState[] = [
  "created",
  "intent_set",
  "plan_submitted",
  "plan_approved",
  "executing",
  "suspended",
];

/**
 * Every legal transition (the formal model; `docs/reference/session-runtime.md` draws it). Notably:
 * `start` from `intent_set` is legal only when the session does not require a plan (checked separately);
 * `submit_plan` from `executing` is a plan change and needs a new approval; an intent update from any state
 * that has an intent returns to `intent_set` (the old plan is invalid); `terminate` is legal from every live state.
 */
export const SESSION_TRANSITIONS: readonly SessionTransition[] = [
  { from: "created", operation: "set_intent", to: "intent_set" },
  { from: "intent_set", operation: "update_intent", to: "intent_set" },
  { from: "plan_submitted", operation: "update_intent", to: "intent_set" },
  { from: "plan_approved", operation: "update_intent", to: "intent_set" },
  { from: "executing", operation: "update_intent", to: "intent_set" },
  { from: "intent_set", operation: "submit_plan", to: "plan_submitted" },
  { from: "plan_submitted", operation: "submit_plan", to: "plan_submitted" },
  { from: "plan_approved", operation: "submit_plan", to: "plan_submitted" },
  { from: "executing", operation: "submit_plan", to: "plan_submitted" },
  { from: "plan_submitted", operation: "approve_plan", to: "plan_approved" },
  { from: "plan_submitted", operation: "reject_plan", to: "intent_set" },
  { from: "plan_approved", operation: "start", to: "executing" },
  { from: "intent_set", operation: "start", to: "executing" },
  { from: "executing", operation: "suspend", to: "suspended" },
  { from: "suspended", operation: "resume", to: "executing" },
  { from: "executing", operation: "complete", to: "completed" },
  ...LIVE.map((from) => ({ from, operation: "terminate" as const, to: "terminated" as const })),
];

/** The state an operation leads to from `from`, or undefined when the transition is illegal. */
export function nextSessionState(from: SessionState, operation: SessionOperation): SessionState | undefined {
  return SESSION_TRANSITIONS.find((t) => t.from === from && t.operation === operation)?.to;
}

/** Whether a state is final (`completed`, `terminated`). */
export function isFinalSessionState(state: SessionState): boolean {
  return state === "completed" || state === "terminated";
}
