/**
 * The session's confirmation desk: it asks the escalation handler, remembers the exact objects the handler
 * answered with, and lets each be spent once, for the question it answered. A look-alike object (from a tool
 * result, a log, another session) is never one of them.
 */
import { canonicalSha256Ref, type JsonValue } from "../canonical-json/index.js";
import type { SessionCode } from "./codes.js";
import type { Confirmation, EscalationHandler, EscalationKind, EscalationQuestion } from "./escalation.js";

/** What a question is asked from: its kind, words, subject and details. */
export interface QuestionDraft {
  readonly kind: EscalationKind;
  readonly text: string;
  /** The exact thing being approved; hashed into `subject_hash`. */
  readonly subject: JsonValue;
  readonly details: JsonValue;
}

/** The outcome of spending a confirmation. */
export type SpendResult =
  { readonly ok: true } | { readonly ok: false; readonly code: SessionCode; readonly message: string };

function isAnswer(value: unknown, question: EscalationQuestion): value is Confirmation {
  if (typeof value !== "object" || value === null) return false;
  const a = value as Record<string, unknown>;
  return (
    a["question_id"] === question.id &&
    a["subject_hash"] === question.subject_hash &&
    typeof a["approved"] === "boolean" &&
    typeof a["by"] === "string" &&
    typeof a["at"] === "string" &&
    (a["note"] === undefined || typeof a["note"] === "string")
  );
}

/** Asks questions and keeps the answers this session may spend. */
export class ConfirmationDesk {
  readonly #answers = new WeakMap<object, EscalationQuestion>();
  readonly #spent = new WeakSet<object>();

  readonly #handler: EscalationHandler;
  readonly #identity: { readonly tenant: string; readonly session: string };

  constructor(handler: EscalationHandler, identity: { readonly tenant: string; readonly session: string }) {
    this.#handler = handler;
    this.#identity = identity;
  }

  /** The `sha256:` subject hash of a draft. */
  static subjectHash(subject: JsonValue): string {
    return canonicalSha256Ref(subject);
  }

  /** Builds the question for a draft. */
  question(draft: QuestionDraft, id: string, askedAt: string): EscalationQuestion {
    return Object.freeze({
      id,
      kind: draft.kind,
      tenant: this.#identity.tenant,
      session: this.#identity.session,
      text: draft.text,
      subject_hash: ConfirmationDesk.subjectHash(draft.subject),
      details: draft.details,
      asked_at: askedAt,
    });
  }

  /**
   * Puts the question to the handler. Returns a frozen copy of a well-formed answer (registered as spendable),
   * or null for no answer, a malformed or mismatched answer, or a handler that threw.
   */
  async ask(question: EscalationQuestion): Promise<{ answer: Confirmation | null; problem?: string }> {
    let raw: unknown;
    try {
      raw = await this.#handler.confirm(question);
    } catch (err) {
      return {
        answer: null,
        problem: `the escalation handler failed: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    if (raw === null || raw === undefined) return { answer: null };
    if (!isAnswer(raw, question))
      return { answer: null, problem: "the escalation handler's answer does not match the question" };
    const answer: Confirmation = Object.freeze(
      raw.note === undefined
        ? {
            question_id: raw.question_id,
            subject_hash: raw.subject_hash,
            approved: raw.approved,
            by: raw.by,
            at: raw.at,
          }
        : {
            question_id: raw.question_id,
            subject_hash: raw.subject_hash,
            approved: raw.approved,
            by: raw.by,
            at: raw.at,
            note: raw.note,
          },
    );
    this.#answers.set(answer, question);
    return { answer };
  }

  /** Spends a confirmation for a question of `kind` about `subject`; each is spent at most once. */
  spend(confirmation: unknown, kind: EscalationKind, subject: JsonValue): SpendResult {
    const question =
      typeof confirmation === "object" && confirmation !== null ? this.#answers.get(confirmation) : undefined;
    if (question === undefined) {
      return {
        ok: false,
        code: "confirmation_invalid",
        message: "the confirmation was not produced by this session's escalation handler",
      };
    }
    const answer = confirmation as Confirmation;
    if (this.#spent.has(answer))
      return { ok: false, code: "confirmation_invalid", message: "the confirmation was used already" };
    if (question.kind !== kind || question.subject_hash !== ConfirmationDesk.subjectHash(subject)) {
      return {
        ok: false,
        code: "confirmation_invalid",
        message: `the confirmation answers a different question (${question.kind})`,
      };
    }
    this.#spent.add(answer);
    if (!answer.approved)
      return { ok: false, code: "confirmation_denied", message: `\`${answer.by}\` declined: ${question.text}` };
    return { ok: true };
  }
}
