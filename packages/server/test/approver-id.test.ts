/**
 * The `approver_id` of an answer over the API is recorded as `api:ID` in the signed consent response and the
 * audit, and shown in denials. It was taken as sent: an escape sequence (`ops\u001b[2K\rroot`), an invisible
 * or bidirectional character — what the webhook channel refuses — and the name of a named approver
 * (`serve.approver_tokens`), so the unnamed approvers' token could sign as `api:pager` an answer the pager's
 * token never gave. Both are refused now, nothing recorded, the request still waiting.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, at, eventually, openTokenServer, readJson, type TokenServer } from "./harness.js";

const AGENT = "agent-token-approver-id-0123456789";
const PAGER = "pager-approver-token-0123456789";

let s: TokenServer;
beforeEach(async () => {
  s = await openTokenServer("approver-id", { token: AGENT, approverTokens: { pager: PAGER } });
});
afterEach(async () => {
  await s.close();
});

/** A call waiting for a person, and its consent request's id. */
async function ask(): Promise<{ readonly call: Promise<Response>; readonly id: string }> {
  const call = s.post("/v1/decide?wait=true", AGENT, { tool: "send_email", arguments: { to: "a@example.com" } });
  const id = await eventually(async () => {
    const res = await fetch(`${s.url}/v1/consent`, { headers: { authorization: `Bearer ${AGENT}` } });
    const found = at(await readJson(res), "requests", 0, "id");
    return typeof found === "string" ? found : undefined;
  });
  return { call, id };
}

async function status(id: string): Promise<unknown> {
  const res = await fetch(`${s.url}/v1/consent/${id}`, { headers: { authorization: `Bearer ${AGENT}` } });
  return at(await readJson(res), "status");
}

/** The approvers of the consent answers recorded in the audit file. */
async function recordedApprovers(): Promise<string[]> {
  await s.node.stores.auditLog.flush();
  return readFileSync(join(s.home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.includes('"consent_denied"') || line.includes('"consent_approved"'))
    .map((line) => {
      const quoted = /"approver":\{"channel":"[^"]*","id":("(?:[^"\\]|\\.)*")/.exec(line)?.[1];
      return quoted === undefined ? "" : (JSON.parse(quoted) as string);
    });
}

describe("POST /v1/consent/{id}/response: approver_id", () => {
  it.each([
    ["an escape sequence", "ops\u001b[2K\rroot"],
    ["a C1 control (CSI)", "ops\u009b2Kroot"],
    ["a zero-width space", "an\u200ba"],
    ["a right-to-left override", "ops\u202etoor"],
  ])("with %s is 400 invalid_body, nothing recorded", async (_name, approverId) => {
    const { call, id } = await ask();
    const res = await s.post(`/v1/consent/${id}/response`, APPROVER_TOKEN, {
      decision: "approved",
      approver_id: approverId,
    });
    expect(res.status).toBe(400);
    const body = await readJson(res);
    expect(at(body, "error", "code")).toBe("invalid_body");
    expect(at(body, "error", "message")).toMatch(/^body\/approver_id: `[^`]*\\u[0-9a-f]{4}[^`]*` holds a control/);
    expect(await status(id)).toBe("pending");
    expect(await recordedApprovers()).toEqual([]);
    expect((await s.post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "denied" })).status).toBe(200);
    expect(at(await readJson(await call), "route")).toBe("refuse");
  });

  it("naming a named approver takes that approver's token: the unnamed token is 403 approver_mismatch", async () => {
    const { call, id } = await ask();
    const forged = await s.post(`/v1/consent/${id}/response`, APPROVER_TOKEN, {
      decision: "approved",
      approver_id: "pager",
    });
    expect(forged.status).toBe(403);
    expect(at(await readJson(forged), "error", "code")).toBe("approver_mismatch");
    expect(await status(id)).toBe("pending");
    expect(await recordedApprovers()).toEqual([]);
    const own = await s.post(`/v1/consent/${id}/response`, PAGER, { decision: "approved", approver_id: "pager" });
    expect(own.status).toBe(200);
    expect(at(await readJson(await call), "route")).toBe("accept");
    expect(await recordedApprovers()).toEqual(["api:pager"]);
  });

  it("any other printable name is the unnamed token holder's word, as before", async () => {
    const { call, id } = await ask();
    const res = await s.post(`/v1/consent/${id}/response`, APPROVER_TOKEN, {
      decision: "denied",
      approver_id: "Ops Team <ops@example.com>",
    });
    expect(res.status).toBe(200);
    expect(at(await readJson(await call), "route")).toBe("refuse");
    expect(await recordedApprovers()).toEqual(["api:Ops Team <ops@example.com>"]);
  });
});
