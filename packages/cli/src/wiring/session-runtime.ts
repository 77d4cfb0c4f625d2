import { randomBytes } from "node:crypto";
import {
  createSession,
  sessionSource,
  type ClassificationOverride,
  type DecisionSource,
  type EscalationHandler,
  type Session,
} from "@acp/core";
import type { CallObserver, ConsentBroker, PlanHook } from "@acp/proxy";
import { OPEN_INTENT } from "../replay/session-runtime.js";

/** Options of the proxy's session runtime. */
export interface ProxySessionRuntimeOptions {
  /** The intent every downstream session runs under (from `--intent`); absent: every action, provenance judged. */
  readonly intent?: unknown;
  /** Upstream servers whose results are trusted (config `trusted: true`); every other result is untrusted. */
  readonly trustedServers: readonly string[];
  readonly classify: readonly ClassificationOverride[];
  readonly now: () => Date;
  /** The consent broker the session's questions (plan approval) go to; bound once the proxy has one. */
  readonly broker?: () => ConsentBroker | undefined;
}

/** One session runtime per downstream MCP session, as a pipeline source and as the proxy's call observer. */
export interface ProxySessionRuntime {
  sourceFor(sessionId: string): DecisionSource;
  readonly observer: CallObserver;
  /** `acp_submit_plan`: validate against the intent, put before a person, then enforce. */
  readonly plans: PlanHook;
}

/** The session's questions go to a person through the proxy's consent channels, signed like any answer. */
function escalationFor(sessionId: string, broker: () => ConsentBroker | undefined, now: () => Date): EscalationHandler {
  return {
    async confirm(question) {
      const b = broker();
      if (b === undefined) return null;
      const outcome = await b.ask({
        server: "acp",
        tool: "acp_submit_plan",
        arguments: { question: question.text, proposal: question.details },
        decision: {
          route: "ask",
          action: "ask",
          rule: `session:${question.kind}`,
          category: "system",
          risk_level: "high",
          reasons: [{ source: "session", code: question.kind, message: question.text }],
          verdicts: [],
        },
        sessionId,
        timeoutMs: 120_000,
        signal: new AbortController().signal,
      });
      if (outcome.kind !== "approved") return null;
      return {
        question_id: question.id,
        subject_hash: question.subject_hash,
        approved: true,
        by: "consent",
        at: now().toISOString(),
      };
    },
  };
}

/**
 * The session runtime of `@acp/core` behind `acp proxy`: every downstream session gets its own runtime
 * session (intent set, started), tool results enter it labelled by server trust, executed calls enter its
 * history, and it judges every call as the pipeline's `session` source — so text an agent read can never
 * become authority ("text from `calendar.read_events` wants to send email to …").
 */
export function createProxySessionRuntime(options: ProxySessionRuntimeOptions): ProxySessionRuntime {
  const sessions = new Map<string, Session>();
  const settings = {
    require_plan: false,
    trusted_servers: [...options.trustedServers],
    classify: [...options.classify],
  };
  const sessionFor = (id: string): Session => {
    let session = sessions.get(id);
    if (session === undefined) {
      session = createSession({
        now: options.now,
        random: (n) => randomBytes(n),
        authorityKey: randomBytes(32),
        settings,
        ...(options.broker !== undefined ? { escalation: escalationFor(id, options.broker, options.now) } : {}),
      });
      session.setIntent(options.intent ?? OPEN_INTENT);
      session.start();
      sessions.set(id, session);
    }
    return session;
  };
  return {
    sourceFor: (id) => sessionSource(sessionFor(id)),
    observer: {
      executed: (id, request) => void sessionFor(id).recordExecution(request),
      result: (id, server, tool, text) => void sessionFor(id).recordToolResult(server, tool, text),
      closed: (id) => void sessions.delete(id),
    },
    plans: {
      async submit(id, plan) {
        const session = sessionFor(id);
        try {
          session.submitPlan(plan);
        } catch (err) {
          return {
            approved: false,
            text: `the plan does not fit the intent: ${err instanceof Error ? err.message : String(err)}`,
          };
        }
        try {
          await session.confirmPlan();
        } catch (err) {
          session.rejectPlan("not approved by a person");
          session.start();
          return {
            approved: false,
            text: `the plan was not approved: ${err instanceof Error ? err.message : String(err)}`,
          };
        }
        session.start();
        return { approved: true, text: "the plan was approved: only its steps run from now on" };
      },
    },
  };
}
