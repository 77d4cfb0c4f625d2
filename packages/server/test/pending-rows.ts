/** Consent requests a dead node (or a killed service) left in the pending table, for the expiry sweep's tests. */
import type { NewPendingConsent } from "@acp/store";

/** A request of `agent-7` for `fs/write_file`, made two minutes before it expires at `expiresAtMs`. */
export function leftBehindRow(id: string, expiresAtMs: number): NewPendingConsent {
  return {
    id,
    nonce: `n_${id}`,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      id,
      agent: { id: "agent-7" },
      action: { tool: "write_file", server: "fs", category: "write", risk_level: "medium" },
      policy: { rule_id: "policy:ask-writes" },
    },
    reasons: [],
    createdAtMs: expiresAtMs - 120_000,
    expiresAtMs,
  };
}
