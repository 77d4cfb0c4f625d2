import { randomBytes } from "node:crypto";
import {
  createSession,
  sessionSource,
  type ClassificationOverride,
  type DecisionSource,
  type Session,
} from "@acp/core";
import type { CallObserver } from "@acp/proxy";
import { OPEN_INTENT } from "../replay/session-runtime.js";

/** Options of the proxy's session runtime. */
export interface ProxySessionRuntimeOptions {
  /** The intent every downstream session runs under (from `--intent`); absent: every action, provenance judged. */
  readonly intent?: unknown;
  /** Upstream servers whose results are trusted (config `trusted: true`); every other result is untrusted. */
  readonly trustedServers: readonly string[];
  readonly classify: readonly ClassificationOverride[];
  readonly now: () => Date;
}

/** One session runtime per downstream MCP session, as a pipeline source and as the proxy's call observer. */
export interface ProxySessionRuntime {
  sourceFor(sessionId: string): DecisionSource;
  readonly observer: CallObserver;
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
  };
}
