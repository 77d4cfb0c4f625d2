/**
 * Who reads `GET /metrics`: it counts every agent's decisions and consent requests (and how long people took
 * to answer), so it is the operators', read with the approvers' tokens. An agents' token, unnamed or named, is
 * 403 `approver_token_required`; no token or a wrong one is 401. With no agents' token configured the API
 * answers loopback callers only and every one of them reads it, as the audit trail. Before, any reading
 * token read it, an agent's included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, openTokenServer, readJson, startTestServer, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const PAGER = "pager-approver-token-0123456789";

let s: TokenServer;
beforeAll(async () => {
  s = await openTokenServer("metrics-scope", {
    token: ANON,
    agentTokens: { ci_bot: CI_BOT },
    approverTokens: { pager: PAGER },
  });
});
afterAll(() => s.close());

function metrics(token?: string): Promise<Response> {
  return fetch(`${s.url}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
}

describe("GET /metrics", () => {
  it("is read with the approvers' tokens", async () => {
    for (const token of [APPROVER_TOKEN, PAGER]) {
      const res = await metrics(token);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^# TYPE acp_decisions_total counter$/m);
    }
  });

  it("refuses an agents' token, unnamed or named (403 approver_token_required)", async () => {
    for (const token of [ANON, CI_BOT]) {
      const res = await metrics(token);
      expect(res.status).toBe(403);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="acp", error="insufficient_scope"');
      expect(await readJson(res)).toMatchObject({ error: { code: "approver_token_required" } });
    }
  });

  it("refuses no token and a wrong one (401)", async () => {
    const missing = await metrics();
    expect(missing.status).toBe(401);
    expect(await readJson(missing)).toMatchObject({ error: { code: "auth_token_missing" } });
    const wrong = await metrics(`${APPROVER_TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(await readJson(wrong)).toMatchObject({ error: { code: "auth_token_wrong" } });
  });

  it("answers every loopback caller when no agents' token is configured, as the audit trail does", async () => {
    const open = await startTestServer();
    try {
      const res = await fetch(`${open.url}/metrics`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect((await fetch(`${open.url}/v1/audit?limit=1`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
