/**
 * A completion (`POST /v1/consent/{id}/complete`) signs a reusable approval within core's caps, counted from
 * when the person answered (the row's `decided_at`), as the waiting call's broker does: a session lasts
 * `MAX_SESSION_APPROVAL_MS`, a window at most `MAX_WINDOW_APPROVAL_MS`. A window the table holds that ends
 * more than that after the answer is not signed (a proof lasting longer does not verify), even when it ends
 * less than that after the completion.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_SESSION_APPROVAL_MS, MAX_WINDOW_APPROVAL_MS, checkEventConsent, type AuditEventV02 } from "@acp/core";
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
const ANSWERED = NOW - 2_000;
const clock = (): Date => new Date(NOW);
const keys = testKeys();

async function answered(scope: unknown, id: string) {
  const nonce = `n_${randomUUID()}`;
  const home = mkdtempSync(join(tmpdir(), "acp-complete-caps-"));
  dirs.push(home);
  const s = await openSqliteStores({ statePath: join(home, "state.db"), auditPath: join(home, "audit.jsonl"), clock });
  opened.push(s);
  const request = {
    type: "consent_request",
    version: "0.2.0",
    id,
    timestamp: new Date(NOW - 60_000).toISOString(),
    expires_at: new Date(NOW + 60_000).toISOString(),
    nonce,
    agent: { id: "agent-7" },
    action: { server: "fs", tool: "write_file", category: "write", risk_level: "medium", parameters: {} },
    policy: { rule_id: "ask-writes", required_level: "medium" },
  };
  await s.pending.insert({
    id,
    nonce,
    sessionId: "s-1",
    server: "fs",
    tool: "write_file",
    request,
    reasons: [],
    createdAtMs: NOW - 60_000,
    expiresAtMs: NOW + 60_000,
  });
  const record = { decision: "approved", approver: "api:ops", nonce, scope };
  expect((await s.pending.decide(id, "approved", record, ANSWERED)).ok).toBe(true);
  const recorded: { type: string; fields: Record<string, unknown> }[] = [];
  const deps = {
    stores: s,
    ...createConsentProofs(keys, s.nonces),
    audit: { record: (type: string, fields: Record<string, unknown>) => void recorded.push({ type, fields }) },
    clock,
  };
  return { completed: await completeConsent(deps, id, new AbortController().signal), recorded };
}

/** The recorded outcome as an event, for checking its response against the public key alone. */
function eventOf(fields: Record<string, unknown>, type: string): AuditEventV02 {
  return { event_type: type, ...fields } as unknown as AuditEventV02;
}

describe("a completion's reusable approvals keep within core's caps", () => {
  it("a session lasts MAX_SESSION_APPROVAL_MS from the answer", async () => {
    const { completed } = await answered("session", "cr_00000000000000000000000000000c01");
    expect(completed.outcome).toBe("approved");
    expect(completed.consent_response?.timestamp).toBe(new Date(ANSWERED).toISOString());
    expect(completed.consent_response?.conditions.valid_until).toBe(
      new Date(ANSWERED + MAX_SESSION_APPROVAL_MS).toISOString(),
    );
  });

  it("a window ending MAX_WINDOW_APPROVAL_MS after the answer is signed, and its proof verifies", async () => {
    const until = new Date(ANSWERED + MAX_WINDOW_APPROVAL_MS).toISOString();
    const { completed, recorded } = await answered({ until }, "cr_00000000000000000000000000000c02");
    expect(completed.outcome).toBe("approved");
    expect(completed.consent_response?.conditions).toMatchObject({ scope: "window", valid_until: until });
    const event = recorded.find((r) => r.type === "consent_approved");
    expect(event).toBeDefined();
    const fields = event?.fields ?? {};
    expect(checkEventConsent(eventOf(fields, "consent_approved"), keys.publicKeyHex)).toEqual({ status: "valid" });
  });

  it("a window ending a second longer after the answer is not signed, though it ends within the cap of now", async () => {
    const until = new Date(ANSWERED + MAX_WINDOW_APPROVAL_MS + 1_000).toISOString();
    const { completed, recorded } = await answered({ until }, "cr_00000000000000000000000000000c03");
    expect(completed.outcome).toBe("denied");
    expect(completed.consent_response).toBeUndefined();
    expect(recorded.map((r) => r.type)).not.toContain("consent_approved");
  });
});
