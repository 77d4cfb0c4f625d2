import { canonicalSha256Ref } from "@acp/core";
import type { ApprovalScope, ConsentRequestV02, ConsentResponseV02 } from "./types.js";

/** An approval that reaches beyond one call (`session` or a time window). */
export interface ApprovalGrant {
  readonly scope: Exclude<ApprovalScope, "once">;
  readonly sessionId: string;
  readonly untilMs: number;
  /** The arguments the approval forwards (the modified ones, when it was modified). */
  readonly arguments: Record<string, unknown>;
  readonly request: ConsentRequestV02;
  readonly response: ConsentResponseV02;
}

/**
 * Whom an approval of wider scope was given to, as part of its key: the asking agent, and whether the call
 * came from that agent's own session namespace (`NAME/…`: `acp serve` puts the sessions of a token that names
 * its agent there, and no other caller may name such a session), which tells an agent a token names from one
 * a body merely claims. Undefined when the call names no agent.
 */
export interface GrantHolder {
  readonly agent?: string;
  readonly sessionId: string;
}

/**
 * What identifies "the same call": server, tool, the canonical hash of the arguments, and the agent it was
 * approved for. A call naming no agent has the key it always had (window approvals kept in `state.db` before
 * agents were part of the key still apply to it); a call naming an agent matches only approvals given to
 * that agent, and one from a token's namespace (see {@link GrantHolder}) only approvals given there.
 */
export function grantKey(
  server: string,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  holder?: GrantHolder,
): string | null {
  const agent = holder?.agent;
  try {
    if (agent === undefined) return canonicalSha256Ref({ server, tool, arguments: args });
    const own = holder !== undefined && holder.sessionId.startsWith(`${agent}/`);
    return canonicalSha256Ref({ server, tool, arguments: args, agent, ...(own ? { agent_namespace: true } : {}) });
  } catch {
    return null;
  }
}

/** In-memory approvals of wider scope; a session grant matches one session, a window grant any session. */
export class ApprovalGrants {
  readonly #grants = new Map<string, ApprovalGrant[]>();

  /** Remembers an approval under the key of the call it answered. */
  add(key: string, grant: ApprovalGrant): void {
    const list = this.#grants.get(key) ?? [];
    list.push(grant);
    this.#grants.set(key, list);
  }

  /** The grant covering this call at `nowMs`, dropping the ones that ended. */
  find(key: string, sessionId: string, nowMs: number): ApprovalGrant | null {
    const list = (this.#grants.get(key) ?? []).filter((g) => g.untilMs > nowMs);
    if (list.length === 0) this.#grants.delete(key);
    else this.#grants.set(key, list);
    return list.find((g) => g.scope !== "session" || g.sessionId === sessionId) ?? null;
  }
}
