/**
 * `acp serve` records each consent decision once: its broker writes the consent events (the decision
 * service does not write them again), one `consent_requested` and one outcome per question, and the outcome
 * carries the signed response with the action it is signed over, so the chain verifies it with the public
 * key alone.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkEventConsent, verifyAuditChain, type AuditEventV02 } from "@acp/core";
import type { EmbeddedServer } from "@acp/server";
import { APPROVER_TOKEN, at, eventually, openTestServerAt, readJson, testKeys } from "./harness.js";

const TOKEN = "consent-once-agents-token-0123456789";
const CONSENT_TYPES = new Set([
  "consent_requested",
  "consent_approved",
  "consent_denied",
  "consent_expired",
  "consent_withdrawn",
]);

const keys = testKeys();
let home: string;
let node: EmbeddedServer;
let url: string;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-consent-once-"));
  ({ node, url } = await openTestServerAt(home, {
    keys,
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    answerPollMs: 20,
    changePollMs: 50,
  }));
});
afterAll(async () => {
  await node.close();
  rmSync(home, { recursive: true, force: true });
});

function post(path: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function lines(): Promise<string[]> {
  await node.stores.auditLog.flush();
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

async function consentOf(id: string): Promise<AuditEventV02[]> {
  return (await lines())
    .map((line) => JSON.parse(line) as AuditEventV02)
    .filter((e) => CONSENT_TYPES.has(e.event_type) && e.request_id === id);
}

async function pendingIds(): Promise<string[]> {
  const res = await fetch(`${url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

/** Raises a call that asks, answers it through the API, and returns the request's id and the call's answer. */
async function askAndAnswer(path: string, answer: unknown): Promise<{ id: string; body: unknown }> {
  const call = post("/v1/decide?wait=true", TOKEN, { tool: "write_file", arguments: { path } });
  const id = await eventually(async () => (await pendingIds())[0]);
  expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, answer)).status).toBe(200);
  return { id, body: await readJson(await call) };
}

describe("acp serve records each consent decision once", () => {
  it("an ask then approve: one consent_requested and one consent_approved, whose response verifies", async () => {
    const { id, body } = await askAndAnswer("/tmp/consent-once-approved", { decision: "approved", scope: "once" });
    expect(body).toMatchObject({ route: "accept", consent: { outcome: "approved", request_id: id } });
    const recorded = await consentOf(id);
    expect(recorded.map((e) => e.event_type)).toEqual(["consent_requested", "consent_approved"]);
    const outcome = recorded[1] as AuditEventV02;
    expect(outcome.metadata["consent_response"]).toMatchObject({ request_id: id, decision: "approved" });
    expect(checkEventConsent(outcome, keys.publicKeyHex)).toEqual({ status: "valid" });
  });

  it("an ask then deny: one consent_requested and one consent_denied, whose response verifies", async () => {
    const { id, body } = await askAndAnswer("/tmp/consent-once-denied", { decision: "denied", reason: "not now" });
    expect(body).toMatchObject({ route: "refuse", consent: { outcome: "denied", request_id: id } });
    const recorded = await consentOf(id);
    expect(recorded.map((e) => e.event_type)).toEqual(["consent_requested", "consent_denied"]);
    const outcome = recorded[1] as AuditEventV02;
    expect(outcome.metadata["consent_response"]).toMatchObject({ request_id: id, decision: "denied" });
    expect(outcome.metadata["reason"]).toContain("not now");
    expect(checkEventConsent(outcome, keys.publicKeyHex)).toEqual({ status: "valid" });
  });

  it("the chain verifies with every consent response checked against the public key", async () => {
    const verdict = verifyAuditChain(await lines(), { publicKey: keys.publicKeyHex });
    expect(verdict.problem).toBeNull();
    expect(verdict.consentResponses).toMatchObject({ checked: 2, unchecked: 0 });
  });
});
