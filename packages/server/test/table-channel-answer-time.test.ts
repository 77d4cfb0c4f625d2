/**
 * The waiting call of `acp serve` stamps a person's answer with when it was recorded in the pending table (the
 * row's `decided_at`), not when the call read it: an answer given a second before the request expired and read
 * a second after (a late wake-up: the next poll, a LISTEN/NOTIFY delivered late) approves, and the signed
 * response says when the person answered. As `acp proxy`'s CLI channel does (answer-time.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkEventConsent, type AuditEventV02 } from "@acp/core";
import type { EmbeddedServer } from "@acp/server";
import { at, eventually, openTestServerAt, readJson, testKeys } from "./harness.js";

const TOKEN = "answer-time-agents-token-0123456789";
const keys = testKeys();
// the service's clock, which the test moves; the request's expiry timer runs on real time and never fires here
let now = Date.now();
let home: string;
let node: EmbeddedServer;
let url: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-answer-time-"));
  ({ node, url } = await openTestServerAt(home, {
    keys,
    token: TOKEN,
    clock: () => new Date(now),
    answerPollMs: 20,
    changePollMs: 50,
  }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

describe("acp serve stamps an answer with when the person gave it", () => {
  it("approves an answer recorded a second before the request expired and read a second after", async () => {
    const call = fetch(`${url}/v1/decide?wait=true`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "write_file", arguments: { path: "/tmp/answer-time" } }),
    });
    const row = await eventually(async () => (await node.stores.pending.listPending(now))[0]);
    const givenAt = row.expiresAtMs - 1_000;
    // the call reads the answer after the request's time ran out (acp approve on another node; a late wake-up)
    now = row.expiresAtMs + 1_000;
    const record = { decision: "approved", approver: "cli:alice", nonce: row.nonce };
    expect((await node.stores.pending.decide(row.id, "approved", record, givenAt)).ok).toBe(true);

    const body = await readJson(await call);
    expect(body).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: row.id } });
    await node.stores.auditLog.flush();
    const approved = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as AuditEventV02)
      .find((e) => e.event_type === "consent_approved" && e.request_id === row.id);
    expect(at(approved?.metadata ?? {}, "consent_response", "timestamp")).toBe(new Date(givenAt).toISOString());
    expect(checkEventConsent(approved as AuditEventV02, keys.publicKeyHex)).toEqual({ status: "valid" });
  });
});
