/**
 * `GET /v1/audit/verify` tells the consent responses it checked with the public key, and names each it
 * could not check with its line and why, as `acp audit verify --json` does (`consentResponses`): the same
 * facts, from the same verifier, in the API's snake_case. The count is the whole chain's also when the
 * service continued its last verification (it reads only the lines appended since). Before, the answer
 * held no word of consent responses.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAuditFile } from "@acp/store";
import type { EmbeddedServer } from "@acp/server";
import { APPROVER_TOKEN, at, eventually, openTestServerAt, readJson, testKeys, type Json } from "./harness.js";

const TOKEN = "audit-verify-consent-token-0123456789";

/**
 * Values a call may hold (strings up to 1,000,000 characters) that make the consent event's line longer
 * than an audit line holds (1 MiB): the longest is cut to its length and SHA-256.
 */
const LONG = "y".repeat(999_000);
const NOTE = "z".repeat(60_000);

const keys = testKeys();
let home: string;
let node: EmbeddedServer;
let url: string;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "acp-audit-verify-consent-"));
  ({ node, url } = await openTestServerAt(home, {
    keys,
    token: TOKEN,
    approverToken: APPROVER_TOKEN,
    answerPollMs: 20,
    changePollMs: 50,
    bodyLimit: 2 * 1024 * 1024,
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

async function verify(): Promise<Json> {
  await node.stores.auditLog.flush();
  const res = await fetch(`${url}/v1/audit/verify`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return readJson(res);
}

async function pendingIds(): Promise<string[]> {
  const res = await fetch(`${url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

/** Raises a call that asks and approves it through the API. */
async function askAndApprove(args: Record<string, unknown>): Promise<void> {
  const call = post("/v1/decide?wait=true", TOKEN, { tool: "write_file", arguments: args });
  const id = await eventually(async () => (await pendingIds())[0]);
  expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "approved" })).status).toBe(200);
  expect(await readJson(await call)).toMatchObject({ route: "accept", consent: { outcome: "approved" } });
}

/** What `acp audit verify --json` says of the consent responses: the verifier run on the whole file, afresh. */
async function cliConsentResponses(): Promise<unknown> {
  const { verification } = await verifyAuditFile(join(home, "audit.jsonl"), { publicKey: keys.publicKeyHex });
  return verification.consentResponses;
}

describe("GET /v1/audit/verify and the consent responses", () => {
  it("counts none in a log that holds none", async () => {
    expect(at(await verify(), "consent_responses")).toEqual({ checked: 0, unchecked: 0, not_checkable: [] });
  });

  it("counts a response checked with the public key, in a verification continued from the last one", async () => {
    await askAndApprove({ path: "/tmp/audit-verify-consent" });
    expect(at(await verify(), "consent_responses")).toEqual({ checked: 1, unchecked: 0, not_checkable: [] });
  });

  it("names a response whose action was cut to fit the line, with its line, why and that its signature was checked", async () => {
    await askAndApprove({ path: "/tmp/audit-verify-long", content: LONG, note: NOTE });
    const answer = await verify();
    expect(at(answer, "valid")).toBe(true);
    const consent = at(answer, "consent_responses") as {
      checked: number;
      unchecked: number;
      not_checkable: { line: number; why: string; signature_checked?: boolean }[];
    };
    // the earlier response, read by the verification before this one, still counts
    expect(consent).toMatchObject({ checked: 1, unchecked: 1 });
    expect(consent.not_checkable).toEqual([
      { line: expect.any(Number) as number, why: "omitted", signature_checked: true },
    ]);
    // the same facts acp audit verify --json gives (consentResponses), line for line
    expect(await cliConsentResponses()).toEqual({
      checked: consent.checked,
      unchecked: consent.unchecked,
      notCheckable: consent.not_checkable.map(({ line, why }) => ({ line, why, signatureChecked: true })),
    });
  });
});
