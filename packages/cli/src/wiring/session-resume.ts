import type { Session } from "@acp/core";
import type { ConsentOutcome } from "@acp/proxy";

/** What one session's resumption questions left behind. */
export interface ResumeSlot {
  /** The question a person is being asked now: later calls wait for the same answer, never ask again. */
  asking?: Promise<void>;
  /** How the last resumption question ended (set by the escalation handler). */
  lastOutcome?: ConsentOutcome["kind"];
  /** A person said no: the session stays suspended, and nobody is asked again while it lives. */
  refused?: boolean;
}

/**
 * The session, resumed first when the kill switch suspended it and a person agrees. The next call of a
 * suspended session puts one question to a person through the consent channels (`acp pending` lists it as
 * `acp.acp_resume_session`; the terminal, Telegram and the webhook show it as any request): approved, the
 * session resumes (the kill switch counts afresh) and the call is judged as usual; denied, the session stays
 * suspended for as long as the agent stays connected and its calls are refused without asking again;
 * unanswered in time, the call is refused and the next call asks again. Calls that arrive while the question
 * is open wait for the same answer.
 */
export function resumedFirst(
  session: Session,
  slot: ResumeSlot,
  log: ((line: string) => void) | undefined,
): Session | Promise<Session> {
  if (session.state !== "suspended" || slot.refused === true) return session;
  if (slot.asking === undefined) {
    const asking = session.confirmResume().then(
      () => undefined,
      (err: unknown) => {
        if (slot.lastOutcome === "denied") slot.refused = true;
        const why =
          slot.lastOutcome === "denied" ? "a person said no" : err instanceof Error ? err.message : String(err);
        log?.(`session \`${session.id}\` stays suspended: ${why}`);
      },
    );
    slot.asking = asking;
    void asking.finally(() => {
      if (slot.asking === asking) delete slot.asking;
    });
  }
  return slot.asking.then(() => session);
}
