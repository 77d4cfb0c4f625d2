/**
 * `POST /v1/consent/{id}/complete` on a request whose recorded answer is malformed (here: it carries another
 * nonce; a row written around the table's checks, by another writer of the database or a node of another
 * version). The completion refuses it, and now concludes the request: it spends the request's nonce, records
 * `consent_denied` (`answer_refused: malformed`) once, and a later completion — also after a "fixed" answer
 * is written into the row under the same nonce — is 409 `consent_already_completed`. Before, it answered
 * `denied` but recorded nothing and left the nonce unspent, so the fixed answer completed as an approval.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createConsentProofs, openSqliteStores, type ServerStores } from "@acp/server";
import { completeConsent } from "../src/service/consent-completion.js";
import { testKeys } from "./harness.js";

const dirs: string[] = [];
const opened: ServerStores[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NOW = Date.parse("2026-03-02T10:00:00Z");
const clock = (): Date => new Date(NOW);

async function stores(): Promise<{ s: ServerStores; statePath: string }> {
  const home = mkdtempSync(join(tmpdir(), "acp-complete-malformed-"));
  dirs.push(home);
  const statePath = join(home, "state.db");
  const s = await openSqliteStores({ statePath, auditPath: join(home, "audit.jsonl"), clock, answerPollMs: 20 });
  opened.push(s);
  return { s, statePath };
}

/** A request a killed node left, answered (in time) with `answer`; it expires a minute from now. */
async function answered(s: ServerStores, id: string, nonce: string, answer: unknown): Promise<void> {
  await s.pending.insert({
    id,
    nonce,
    sessionId: "s",
    server: "fs",
    tool: "write_file",
    request: {
      type: "consent_request",
      version: "0.2.0",
      id,
      timestamp: new Date(NOW - 60_000).toISOString(),
      expires_at: new Date(NOW + 60_000).toISOString(),
      nonce,
      agent: { id: "agent-7", name: "agent-7" },
      action: { server: "fs", tool: "write_file", category: "write", risk_level: "medium", parameters: {} },
      policy: { rule_id: "ask-writes", required_level: "medium" },
    },
    reasons: [],
    createdAtMs: NOW - 60_000,
    expiresAtMs: NOW + 60_000,
  });
  expect(await s.pending.decide(id, "approved", answer, NOW - 1_000)).toMatchObject({ ok: true });
}

describe("completing a request whose recorded answer is malformed", () => {
  it("refuses it, records consent_denied once and spends the nonce, so a fixed answer cannot be taken under it", async () => {
    const { s, statePath } = await stores();
    const id = "cr_00000000000000000000000000000d01";
    const nonce = `n_${randomUUID()}`;
    await answered(s, id, nonce, { decision: "approved", approver: "api:ops", nonce: `n_${randomUUID()}` });
    const recorded: { type: string; fields: Record<string, unknown> }[] = [];
    const deps = {
      stores: s,
      ...createConsentProofs(testKeys(), s.nonces),
      audit: { record: (type: string, fields: Record<string, unknown>) => void recorded.push({ type, fields }) },
      clock,
    };

    expect(await completeConsent(deps, id, new AbortController().signal)).toEqual({
      outcome: "denied",
      request_id: id,
      reason: "refused a malformed answer",
    });
    expect(recorded).toEqual([
      {
        type: "consent_denied",
        fields: expect.objectContaining({
          request_id: id,
          agent: "agent-7",
          decision: "denied",
          metadata: {
            reason: "refused a malformed answer",
            answer_refused: "malformed",
            completed_after_restart: true,
          },
        }) as unknown,
      },
    ]);

    // a second completion (on any node) finds the nonce spent: told so, nothing more recorded
    await expect(completeConsent(deps, id, new AbortController().signal)).rejects.toMatchObject({
      status: 409,
      code: "consent_already_completed",
    });

    // a "fixed" answer written into the row under the same nonce is not taken either
    const db = new Database(statePath);
    try {
      const fixed = { decision: "approved", approver: "api:ops", nonce };
      db.prepare("UPDATE pending_consent SET answer_json = ? WHERE id = ?").run(JSON.stringify(fixed), id);
    } finally {
      db.close();
    }
    await expect(completeConsent(deps, id, new AbortController().signal)).rejects.toMatchObject({
      status: 409,
      code: "consent_already_completed",
    });
    expect(recorded).toHaveLength(1);
  });
});
