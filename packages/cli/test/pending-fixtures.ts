import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPendingConsentStore, openPendingConsentDb, type PendingOwner } from "@acp/store";

/** A fresh `$ACP_HOME`. */
export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), "acp-cli-pending-"));
}

/** Writes one pending consent request into `$ACP_HOME/state.db` as the proxy would. */
export function seedPending(
  home: string,
  options: {
    id: string;
    expiresAt?: string;
    args?: Record<string, unknown>;
    tool?: string;
    reason?: string;
    /** The §4.1 `agent` of the request (default: none, as rows written before requests named one). */
    agent?: { id: string; name: string; command: string };
    /** The process waiting for the answer (default: none, as acp serve writes rows). */
    owner?: PendingOwner;
  },
): void {
  const db = openPendingConsentDb(join(home, "state.db"));
  try {
    const request = {
      type: "consent_request",
      id: options.id,
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
      action: {
        server: "mail",
        tool: options.tool ?? "send_email",
        category: "communication",
        risk_level: "high",
        parameters: options.args ?? { to: "bob@example.com", smtp_password: "[redacted]" },
      },
      policy: { rule_id: "policy:ask-mail" },
      nonce: "n_11111111-2222-4333-8444-555555555555",
    };
    createPendingConsentStore(db, options.owner !== undefined ? { owner: options.owner } : {}).insert({
      id: options.id,
      nonce: request.nonce,
      sessionId: "s1",
      server: "mail",
      tool: options.tool ?? "send_email",
      request,
      reasons: [
        {
          source: "policy",
          code: "rule_matched",
          message: options.reason ?? "rule `ask-mail` asks before mail",
          rule: "ask-mail",
        },
      ],
      createdAtMs: Date.parse("2026-01-15T11:59:00Z"),
      expiresAtMs: Date.parse(options.expiresAt ?? "2026-01-15T12:05:00Z"),
    });
  } finally {
    db.close();
  }
}

/** The status of a row. */
export function statusOf(home: string, id: string): unknown {
  const db = openPendingConsentDb(join(home, "state.db"));
  try {
    const row = createPendingConsentStore(db).get(id);
    return row === null ? null : { status: row.status, answer: row.answer };
  } finally {
    db.close();
  }
}

export const ID_A = `cr_${"a".repeat(32)}`;
export const ID_B = `cr_${"b".repeat(32)}`;
