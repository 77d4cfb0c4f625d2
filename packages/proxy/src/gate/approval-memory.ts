import { tryCanonicalJson } from "@acp/core";

/** One remembered approval: scope `session` or a time window. */
export interface RememberedApproval {
  readonly scope: "session" | { readonly until: string };
  /** The signed consent response the approval came from (audited again on reuse). */
  readonly consentResponse: unknown;
}

/**
 * Approvals a person scoped beyond one call: for the rest of the session, or until a time, for the same
 * server, tool and (canonically) equal arguments. Kept in memory per session; a new session starts empty.
 */
export interface ApprovalMemory {
  remember(
    sessionId: string,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    approval: RememberedApproval,
  ): void;
  /** A still-valid remembered approval for this exact call, if any. */
  find(
    sessionId: string,
    server: string,
    tool: string,
    args: Record<string, unknown>,
    now: Date,
  ): RememberedApproval | undefined;
  /** Forgets a session's approvals (its client disconnected). */
  forgetSession(sessionId: string): void;
}

/** Creates an in-memory approval memory. */
export function createApprovalMemory(): ApprovalMemory {
  const sessions = new Map<string, Map<string, RememberedApproval>>();
  const keyOf = (server: string, tool: string, args: Record<string, unknown>): string | undefined => {
    const canonical = tryCanonicalJson(args);
    return canonical.ok ? `${server}\u0000${tool}\u0000${canonical.value}` : undefined;
  };
  return {
    remember(sessionId, server, tool, args, approval) {
      const key = keyOf(server, tool, args);
      if (key === undefined) return;
      const map = sessions.get(sessionId) ?? new Map<string, RememberedApproval>();
      map.set(key, approval);
      sessions.set(sessionId, map);
    },
    find(sessionId, server, tool, args, now) {
      const key = keyOf(server, tool, args);
      const found = key === undefined ? undefined : sessions.get(sessionId)?.get(key);
      if (found === undefined) return undefined;
      if (found.scope === "session") return found;
      const until = Date.parse(found.scope.until);
      return Number.isFinite(until) && until > now.getTime() ? found : undefined;
    },
    forgetSession: (sessionId) => void sessions.delete(sessionId),
  };
}
