import type { Reason } from "@acp/core";
import type { ApprovalScope, ConsentChannel, ConsentRequestV02, HumanAnswer } from "@acp/proxy";

/** The name the callback's answers are recorded under (`approver.channel` of the signed response). */
export const GUARD_CHANNEL = "app";

/** What the person is asked: the §4.1 consent request (arguments redacted) and why the pipeline asks. */
export interface GuardQuestion {
  /** `request.action` names the server, tool, category, risk and (redacted) parameters; `request.id` is the `cr_…` id. */
  readonly request: ConsentRequestV02;
  /** Every source's reasons (``text from `mail.read_inbox` wants to send email to `mark@attacker.example` ``). */
  readonly reasons: readonly Reason[];
  readonly sessionId: string;
  /** Aborted when the request is answered elsewhere (`acp approve`, Telegram), expires or is withdrawn. */
  readonly signal: AbortSignal;
}

/**
 * A person's answer: `true` / `false`, or in full — `approved` (for this call, or `scope: "session"` for
 * the same call again in this session, or `{ until }`), `denied` with a `reason`, or
 * `approved_with_modifications` with the arguments the person changed. `by` names the person in the
 * signed response (`app:<by>`; default `app:user`).
 */
export type GuardAnswer =
  | boolean
  | {
      readonly decision: HumanAnswer["decision"];
      readonly reason?: string;
      readonly scope?: ApprovalScope;
      readonly modifications?: Record<string, unknown>;
      readonly by?: string;
    };

/** The guard's `ask` option: puts the question before a person and resolves with their answer. */
export type AskPerson = (question: GuardQuestion) => Promise<GuardAnswer>;

/**
 * The `ask` callback as one more consent channel of the home's broker: it is delivered every request with
 * the configured channels (`acp approve`, webhook, Telegram), the first answer wins, and the broker turns
 * it into a consent response signed with the home's key and verified before anything runs. A callback
 * that throws or answers nonsense approves nothing (the broker denies).
 */
export function createAnswerChannel(ask: AskPerson): ConsentChannel {
  return {
    name: GUARD_CHANNEL,
    isAvailable: () => true,
    async deliver(delivery) {
      const answer = await ask({
        request: delivery.request,
        reasons: delivery.reasons,
        sessionId: delivery.sessionId,
        signal: delivery.signal,
      });
      return humanAnswerOf(answer);
    },
  };
}

function humanAnswerOf(answer: GuardAnswer): HumanAnswer {
  if (typeof answer === "boolean") return { decision: answer ? "approved" : "denied", approverId: "app:user" };
  // anything else the broker checks (checkHumanAnswer) and denies when malformed
  const { by, ...rest } = answer;
  return { ...rest, approverId: `${GUARD_CHANNEL}:${typeof by === "string" && by !== "" ? by : "user"}` };
}
