/**
 * Agents' tokens that name their agent (`serve.agent_tokens`): a request made with one is recorded as that
 * agent's whatever its body claims (another name is 403 `agent_mismatch`, nothing recorded), its sessions are
 * its own (another agent naming the same session cannot reuse its approvals), and it cannot answer consent.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import {
  APPROVER_TOKEN,
  at,
  eventually,
  READ_EVENT,
  readJson,
  openTestServerAt,
  testKeys,
  openTokenServer,
  type TokenServer,
} from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const SUPPORT = "support-agent-token-0123456789";
const PAGER = "pager-approver-token-0123456789";

let home: string;
let node: EmbeddedServer;
let url: string;
let post: TokenServer["post"];
let close: () => Promise<void>;
beforeAll(async () => {
  ({ home, node, url, post, close } = await openTokenServer("agent-tokens", {
    token: ANON,
    agentTokens: { ci_bot: CI_BOT, support: SUPPORT },
    approverTokens: { pager: PAGER },
  }));
});
afterAll(() => close());

/** The audit file's events (after a flush). */
async function events(): Promise<{ event_type: string; agent: string | null; tool: string | null }[]> {
  await node.stores.auditLog.flush();
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { event_type: string; agent: string | null; tool: string | null });
}

async function pendingIds(): Promise<string[]> {
  // the approvers' token reads every request (an agent's token only those raised with it)
  const res = await fetch(`${url}/v1/consent?status=pending`, {
    headers: { authorization: `Bearer ${APPROVER_TOKEN}` },
  });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

describe("a token that names its agent", () => {
  it("records its requests under that agent, whatever the body leaves out", async () => {
    expect((await post("/v1/decide", CI_BOT, { tool: "read_notes", arguments: {} })).status).toBe(200);
    expect((await post("/v1/decide", CI_BOT, { tool: "read_more", arguments: {}, agent: "ci_bot" })).status).toBe(200);
    const check = await post("/pre-tool-check", SUPPORT, READ_EVENT);
    expect(check.status).toBe(200);
    const recorded = (await events()).filter((e) => e.event_type === "policy_evaluated");
    expect(recorded.find((e) => e.tool === "read_notes")?.agent).toBe("ci_bot");
    expect(recorded.find((e) => e.tool === "read_more")?.agent).toBe("ci_bot");
    expect(recorded.at(-1)?.agent).toBe("support");
  });

  it("refuses a body naming another agent: 403 agent_mismatch, nothing recorded", async () => {
    const before = (await events()).length;
    const decide = await post("/v1/decide", CI_BOT, { tool: "read_x", arguments: {}, agent: "support" });
    expect(decide.status).toBe(403);
    const error = at(await readJson(decide), "error") as { code: string; message: string };
    expect(error.code).toBe("agent_mismatch");
    expect(error.message).toContain("`ci_bot`");
    const check = await post("/pre-tool-check", SUPPORT, { ...READ_EVENT, agent_id: "ci_bot" });
    expect(check.status).toBe(403);
    expect(at(await readJson(check), "error", "code")).toBe("agent_mismatch");
    // over MCP: a tool error, nothing decided
    const mcp = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${CI_BOT}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "aana_pre_tool_check", arguments: { ...READ_EVENT, agent_id: "support" } },
      }),
    });
    const answer = (await mcp.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]?.text).toMatch(/^agent_mismatch: /);
    expect((await events()).length).toBe(before);
    // the anonymous agents' token names whoever the body says, but an agent with a token of its own only with
    // that token (audit-agent-binding.test.ts): its audit view is its own
    const claimed = await post("/v1/decide", ANON, { tool: "read_y", arguments: {}, agent: "support" });
    expect(claimed.status).toBe(403);
    expect(at(await readJson(claimed), "error", "code")).toBe("agent_mismatch");
    expect((await post("/v1/decide", ANON, { tool: "read_y", arguments: {}, agent: "helper" })).status).toBe(200);
    expect((await events()).find((e) => e.tool === "read_y")?.agent).toBe("helper");
  });

  it("has sessions of its own: another agent naming the same session does not reuse its approval", async () => {
    const call = { tool: "write_file", arguments: { path: "/tmp/agent-session" } };
    const first = post("/v1/decide?wait=true&session=s1", CI_BOT, call);
    const id = await eventually(async () => (await pendingIds())[0]);
    const approved = await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, {
      decision: "approved",
      scope: "session",
    });
    expect(approved.status).toBe(200);
    expect(await readJson(await first)).toMatchObject({ route: "accept" });
    // the same agent, the same session: reused without asking
    expect(await readJson(await post("/v1/decide?wait=true&session=s1", CI_BOT, call))).toMatchObject({
      route: "accept",
    });
    expect(await pendingIds()).toEqual([]);
    // another agent naming session s1: asked
    const other = post("/v1/decide?wait=true&session=s1", SUPPORT, call);
    const asked = await eventually(async () => (await pendingIds())[0]);
    const denied = await post(`/v1/consent/${asked}/response`, APPROVER_TOKEN, { decision: "denied" });
    expect(denied.status).toBe(200);
    expect(await readJson(await other)).toMatchObject({ route: "refuse" });
  });

  it("completes only its own requests (POST /v1/consent/{id}/complete)", async () => {
    const call = post("/v1/decide?wait=true&session=c1", CI_BOT, {
      tool: "write_file",
      arguments: { path: "/tmp/complete-own" },
    });
    const id = await eventually(async () => (await pendingIds())[0]);
    const other = await post(`/v1/consent/${id}/complete`, SUPPORT, {});
    expect(other.status).toBe(403);
    expect(at(await readJson(other), "error", "code")).toBe("agent_mismatch");
    expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "denied" })).status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "refuse" });
    // its own: answered with the outcome (the waiting call already recorded it)
    const own = await post(`/v1/consent/${id}/complete`, CI_BOT, {});
    expect(own.status).not.toBe(403);
  });

  it("reads, but cannot answer consent (403) or stand in for the approvers", async () => {
    expect((await fetch(`${url}/v1/audit?limit=1`, { headers: { authorization: `Bearer ${SUPPORT}` } })).status).toBe(
      200,
    );
    const answer = await post(`/v1/consent/cr_${"c".repeat(32)}/response`, SUPPORT, { decision: "approved" });
    expect(answer.status).toBe(403);
    expect(at(await readJson(answer), "error", "code")).toBe("approver_token_required");
    // the approvers' token cannot ask for decisions
    expect((await post("/v1/decide", APPROVER_TOKEN, { tool: "read_z", arguments: {} })).status).toBe(401);
  });
});

describe("a token that names its approver", () => {
  it("answers as that approver (api:NAME in the signed response and the audit); another approver_id is 403", async () => {
    const call = post("/v1/decide?wait=true", CI_BOT, { tool: "write_file", arguments: { path: "/tmp/pager" } });
    const id = await eventually(async () => (await pendingIds())[0]);
    const before = (await events()).length;
    const other = await post(`/v1/consent/${id}/response`, PAGER, { decision: "approved", approver_id: "ops" });
    expect(other.status).toBe(403);
    expect(at(await readJson(other), "error", "code")).toBe("approver_mismatch");
    expect((await events()).length).toBe(before);
    // it cannot ask for decisions, and it reads
    expect((await post("/v1/decide", PAGER, { tool: "read_p", arguments: {} })).status).toBe(401);
    expect((await fetch(`${url}/v1/consent/${id}`, { headers: { authorization: `Bearer ${PAGER}` } })).status).toBe(
      200,
    );
    const answered = await post(`/v1/consent/${id}/response`, PAGER, { decision: "approved", approver_id: "pager" });
    expect(answered.status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "accept" });
    const approved = (await events()).filter((e) => e.event_type === "consent_approved").at(-1);
    expect(JSON.stringify(approved)).toContain('"approver":{"channel":"cli","id":"api:pager"}');
  });
});

describe("named agents' tokens alone (no anonymous agents' token)", () => {
  it("close the API to callers without one, and a service with a token used twice does not start", async () => {
    const other = mkdtempSync(join(tmpdir(), "acp-agent-tokens-only-"));
    try {
      // one home, one key: the second start signs its audit log with the key the first did
      const keys = testKeys();
      const only = await openTestServerAt(other, { agentTokens: { ci_bot: CI_BOT }, keys });
      try {
        const none = await fetch(`${only.url}/v1/decide`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tool: "read_a", arguments: {} }),
        });
        expect(none.status).toBe(401);
        expect((await post2(only.url, "/v1/decide", "not-the-token-0123456789")).status).toBe(401);
        expect((await post2(only.url, "/v1/decide", CI_BOT)).status).toBe(200);
        expect((await fetch(`${only.url}/v1/audit`)).status).toBe(401);
      } finally {
        await only.node.close();
      }
      await expect(openTestServerAt(other, { token: ANON, agentTokens: { ci_bot: ANON }, keys })).rejects.toThrow(
        /token of `ci_bot` is also another token/,
      );
      await expect(openTestServerAt(other, { agentTokens: { "CI Bot": CI_BOT }, keys })).rejects.toThrow(
        /token name `CI Bot`/,
      );
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

function post2(base: string, path: string, token: string): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ tool: "read_a", arguments: {} }),
  });
}
