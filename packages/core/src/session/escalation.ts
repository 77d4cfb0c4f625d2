/**
 * The escalation handler interface and the confirmation objects it produces. A confirmation is accepted only if
 * this session's own handler returned that very object for a question this session asked, for the exact subject
 * being changed, once. Nothing a tool returns can be one: tool results are recorded as labelled text.
 */
import type { JsonValue } from "../canonical-json/index.js";

/** What a question is about. */
export type EscalationKind = "intent_update" | "plan_approval" | "resume" | "action";

/** A question put to a person, in words they can answer. */
export interface EscalationQuestion {
  /** Random id; a confirmation names it. */
  readonly id: string;
  readonly kind: EscalationKind;
  readonly tenant: string;
  readonly session: string;
  /** The semantic question (`text from \`calendar.read_events\` wants to send email to \`x@y\``). */
  readonly text: string;
  /** `sha256:` of exactly what is being approved (the new intent, the plan, the call, the suspension). */
  readonly subject_hash: string;
  /** What a console may show beside the text (the proposed intent or plan, the call, the reasons). */
  readonly details: JsonValue;
  /** ISO-8601 time the question was asked. */
  readonly asked_at: string;
}

/** A person's answer, as the escalation handler returns it. */
export interface Confirmation {
  readonly question_id: string;
  /** Must equal the question's `subject_hash`. */
  readonly subject_hash: string;
  /** `false` (or a `null` answer) declines. */
  readonly approved: boolean;
  /** Who answered (a user id, a channel). */
  readonly by: string;
  /** ISO-8601 time of the answer. */
  readonly at: string;
  readonly note?: string;
}

/** Puts questions to a person (the proxy wires it to its consent channels). `null` means no answer: declined. */
export interface EscalationHandler {
  confirm(question: EscalationQuestion): Promise<Confirmation | null>;
}

/** A handler that never approves: what a session without a handler uses. */
export const DECLINING_ESCALATION_HANDLER: EscalationHandler = Object.freeze({
  confirm: () => Promise.resolve(null),
});
