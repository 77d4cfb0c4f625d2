import type { Session, SessionEvent } from "@acp/core";
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

/**
 * Agents with a token of their own (`proxy.agent_tokens`: the only identity the proxy can trust) held by the
 * kill switch across their sessions: while one of an agent's sessions is suspended and not resumed, a new
 * session of that agent starts suspended (a reconnect does not reset the switch), and once a person said no
 * to resuming, it is refused without asking. Sessions without a token of their own cannot be told apart.
 */
export interface AgentSuspensions {
  /** Told each event of a session of `agent` (`slot`: that session's resumption questions). */
  observe(agent: string, event: SessionEvent, slot: ResumeSlot): void;
  /** A new session of `agent`, just started: suspended when the agent is held. */
  hold(agent: string, session: Session, slot: ResumeSlot): void;
}

export function createAgentSuspensions(): AgentSuspensions {
  // `refused`: a person said no to resuming one of the agent's sessions
  const held = new Map<string, { refused: boolean }>();
  return {
    observe(agent, event, slot) {
      if (event.type === "suspended" && !held.has(agent)) held.set(agent, { refused: false });
      if (event.type === "resumed") held.delete(agent);
      const agentHeld = held.get(agent);
      if (event.type === "confirmation_refused" && slot.lastOutcome === "denied" && agentHeld !== undefined)
        agentHeld.refused = true;
    },
    hold(agent, session, slot) {
      const agentHeld = held.get(agent);
      if (agentHeld === undefined) return;
      session.suspend(`an earlier session of agent \`${agent}\` was suspended and nobody resumed it`);
      if (agentHeld.refused) slot.refused = true;
    },
  };
}
