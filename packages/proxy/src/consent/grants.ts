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

/** What identifies "the same call": server, tool and the canonical hash of the arguments. */
export function grantKey(server: string, tool: string, args: Readonly<Record<string, unknown>>): string | null {
  try {
    return canonicalSha256Ref({ server, tool, arguments: args });
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
