import { tryCanonicalJson } from "@acp/core";

/** One remembered approval: scope `session` or a time window. */
export interface RememberedApproval {
  readonly scope: "session" | { readonly until: string };
  /** The signed consent response the approval came from (audited again on reuse). */
  readonly consentResponse: unknown;
}

/**
 * Approvals a person scoped beyond one call: for the rest of the session, or until a time, for the same
 * server, tool and (canonically) equal arguments, never past the signed response's `conditions.valid_until`
 * (a session approval lasts at most what the broker signed, 12 hours). Kept in memory per session; a new
 * session starts empty.
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
      // no longer than the signed response says (a session approval too: 12 h), nor than the scope chosen
      const signed = signedUntil(found.consentResponse);
      const chosen = found.scope === "session" ? signed : Math.min(Date.parse(found.scope.until), signed);
      return Number.isFinite(chosen) && chosen > now.getTime() ? found : undefined;
    },
    forgetSession: (sessionId) => void sessions.delete(sessionId),
  };
}

/** `conditions.valid_until` of a signed consent response in ms; NaN when it has none (then it is not reused). */
function signedUntil(response: unknown): number {
  const conditions = (response as { conditions?: { valid_until?: unknown } } | null)?.conditions;
  return typeof conditions?.valid_until === "string" ? Date.parse(conditions.valid_until) : Number.NaN;
}
