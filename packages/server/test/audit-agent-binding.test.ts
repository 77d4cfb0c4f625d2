/**
 * A named agent's audit view (`GET /v1/audit` with its token) lists the events recorded under its name, so no
 * other caller may record an event under that name: a request made with a token that names no agent (the
 * unnamed agents' token) naming an agent that has a token of its own (`agent` in `/v1/decide`, `agent_id` in
 * `/pre-tool-check`) is 403 `agent_mismatch`, nothing decided or recorded. Before, the unnamed agents' token
 * recorded events under any name, and they showed in that agent's view as its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, READ_EVENT, openTokenServer, readJson, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";

let s: TokenServer;
beforeAll(async () => {
  s = await openTokenServer("audit-agent-binding", { token: ANON, agentTokens: { ci_bot: CI_BOT } });
});
afterAll(() => s.close());

/** The events `token` reads (newest first), after the chain's queued writes. */
async function view(token: string): Promise<{ agent?: string; tool?: string }[]> {
  await s.node.stores.auditLog.flush();
  const res = await fetch(`${s.url}/v1/audit?limit=500`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await readJson(res)) as { events: { event: { agent?: string; tool?: string } }[] }).events.map(
    (e) => e.event,
  );
}

describe("an event's agent is the caller's", () => {
  it("refuses the unnamed agents' token naming an agent that has a token (403 agent_mismatch), nothing recorded", async () => {
    const before = (await view(APPROVER_TOKEN)).length;
    const decided = await s.post("/v1/decide", ANON, {
      tool: "planted_decide",
      arguments: { path: "/tmp/planted" },
      agent: "ci_bot",
    });
    expect(decided.status).toBe(403);
    const body = await readJson(decided);
    expect(body).toMatchObject({ error: { code: "agent_mismatch" } });
    expect(JSON.stringify(body)).toContain("`ci_bot` has a token of its own");
    const checked = await s.post("/pre-tool-check", ANON, {
      ...READ_EVENT,
      tool_name: "planted_check",
      agent_id: "ci_bot",
    });
    expect(checked.status).toBe(403);
    expect(await readJson(checked)).toMatchObject({ error: { code: "agent_mismatch" } });
    expect((await view(APPROVER_TOKEN)).length).toBe(before);
    expect((await view(CI_BOT)).map((e) => e.tool)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^planted_/)]),
    );
  });

  it("records the unnamed agents' token under a name no token holds, and a named token under its own", async () => {
    expect((await s.post("/v1/decide", ANON, { tool: "free_name", arguments: {}, agent: "helper" })).status).toBe(200);
    expect((await s.post("/v1/decide", CI_BOT, { tool: "own_name", arguments: {} })).status).toBe(200);
    const all = await view(APPROVER_TOKEN);
    expect(all.find((e) => e.tool === "free_name")?.agent).toBe("helper");
    const own = await view(CI_BOT);
    expect(own.map((e) => e.tool)).toContain("own_name");
    expect(own.every((e) => e.agent === "ci_bot")).toBe(true);
    expect(own.map((e) => e.tool)).not.toContain("free_name");
  });
});
