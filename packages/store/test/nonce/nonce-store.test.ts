import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createMemoryNonceStore,
  ed25519KeyPairFromSeed,
  createConsentRequest,
  signConsentResponse,
  verifyConsentProof,
} from "@acp/core";
import { describeNonceStore } from "../nonce-store.case.js";
import { describeNoncePrune } from "../nonce-prune.case.js";
import { createSqliteNonceStore } from "../../src/nonce/index.js";
import { openStateDb } from "../../src/sqlite/index.js";

describeNonceStore("memory", () => createMemoryNonceStore());
describeNonceStore("sqlite", () => createSqliteNonceStore(openStateDb(":memory:")));
describeNoncePrune("sqlite", (clock) => {
  const db = openStateDb(":memory:");
  const nonces = createSqliteNonceStore(db, { now: clock });
  const insert = db.prepare<[string, string]>(
    `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms, status)
     VALUES (?, ?, 'mail', 'send_email', '{}', '[]', 0, 0, 'approved')`,
  );
  const remove = db.prepare<[string]>("DELETE FROM pending_consent WHERE id = ?");
  return Promise.resolve({
    nonces,
    holdRow: (id, nonce) => Promise.resolve().then(() => void insert.run(id, nonce)),
    dropRow: (id) => Promise.resolve().then(() => void remove.run(id)),
  });
});

describe("sqlite nonce store", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-nonce-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses a replayed approval after a restart (the database file is reopened)", async () => {
    const key = ed25519KeyPairFromSeed(new Uint8Array(32).fill(3));
    const t0 = new Date("2026-01-15T12:00:00Z");
    let n = 0;
    const request = createConsentRequest(
      {
        agent: { id: "a", name: "a", command: "a" },
        action: {
          tool: "send_email",
          server: "mail",
          category: "communication",
          risk_level: "high",
          parameters: { to: "b" },
          description: "d",
        },
        policy: { rule_id: "r", rule_name: "r", required_level: "high" },
        timeoutSeconds: 300,
      },
      { now: () => t0, randomUUID: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}` },
    );
    const response = signConsentResponse(
      { request, decision: "approved", approver: { id: "alice", channel: "terminal" }, validForSeconds: 60 },
      key,
      { now: () => t0 },
    );
    const path = join(dir, "state.db");
    const options = { request, trustedPublicKey: key.publicKeyHex, now: new Date(t0.getTime() + 1000) };

    const first = openStateDb(path);
    const accepted = await verifyConsentProof(response, { ...options, nonceStore: createSqliteNonceStore(first) });
    expect(accepted.ok).toBe(true);
    first.close();

    const second = openStateDb(path);
    const replay = await verifyConsentProof(response, { ...options, nonceStore: createSqliteNonceStore(second) });
    expect(replay.ok ? "ok" : replay.reason).toBe("replayed");
    second.close();
  });

  it("shares spent nonces between two connections to one file", () => {
    const path = join(dir, "shared.db");
    const a = createSqliteNonceStore(openStateDb(path));
    const b = createSqliteNonceStore(openStateDb(path));
    expect(a.spend("n_x", "cr_1", 10)).toBe(true);
    expect(b.spend("n_x", "cr_1", 10)).toBe(false);
    expect(b.isSpent("n_x")).toBe(true);
  });

  it("answers the prune's row check from the nonce index", () => {
    const db = openStateDb(":memory:");
    createSqliteNonceStore(db);
    const plan = db
      .prepare<[], { detail: string }>(
        "EXPLAIN QUERY PLAN SELECT 1 FROM spent_nonces n WHERE n.expires_at_ms < 0 AND NOT EXISTS (SELECT 1 FROM pending_consent p WHERE p.nonce = n.nonce)",
      )
      .all()
      .map((r) => r.detail);
    expect(plan.join("\n")).toMatch(/spent_nonces_expiry/);
    expect(plan.join("\n")).toMatch(/pending_consent_nonce/);
  });
});
