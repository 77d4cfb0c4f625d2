/**
 * Who reads the audit trail (`GET /v1/audit`): its consent events carry each call's arguments, so an agent's
 * token must not read other agents'. The approvers' tokens read every event; a token that names its agent only
 * the events recorded under its name (`?agent=` another is 403 `agent_mismatch`); the unnamed agents' token,
 * which every caller holding it shares, none (403 `approver_token_required`). Before, any reading token read all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, eventually, openTokenServer, readJson, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const SUPPORT = "support-agent-token-0123456789";
const PAGER = "pager-approver-token-0123456789";

let s: TokenServer;

beforeAll(async () => {
  s = await openTokenServer("audit-read-scope", {
    token: ANON,
    agentTokens: { ci_bot: CI_BOT, support: SUPPORT },
    approverTokens: { pager: PAGER },
  });
  for (const [caller, token] of [
    ["ci_bot", CI_BOT],
    ["support", SUPPORT],
    ["anon", ANON],
  ] as const) {
    const before = new Set((await s.node.stores.pending.listPending(Date.now())).map((r) => r.id));
    const path = `/tmp/audit-scope-${caller}`;
    const waiting = s.post("/v1/decide?wait=true", token, { tool: "write_file", arguments: { path } });
    const id = await eventually(async () =>
      (await s.node.stores.pending.listPending(Date.now())).map((r) => r.id).find((id) => !before.has(id)),
    );
    // approved: the consent_approved event records the arguments (`metadata.consent_action`)
    expect((await s.post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "approved" })).status).toBe(200);
    expect((await waiting).status).toBe(200);
  }
  await s.node.stores.auditLog.flush();
});

afterAll(async () => {
  await s.close();
});

function get(path: string, token: string): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

interface Listed {
  readonly events: { readonly event: { readonly agent?: string } }[];
}

/** The page `token` reads, and which of the three callers' arguments it shows. */
async function read(token: string, query = ""): Promise<{ agents: string[]; paths: string[] }> {
  const res = await get(`/v1/audit?limit=500${query}`, token);
  expect(res.status).toBe(200);
  const page = (await readJson(res)) as Listed;
  const text = JSON.stringify(page);
  return {
    agents: [...new Set(page.events.map((e) => e.event.agent ?? ""))].sort(),
    paths: ["ci_bot", "support", "anon"].filter((c) => text.includes(`/tmp/audit-scope-${c}`)),
  };
}

describe("reading the audit trail", () => {
  it("shows the approvers' tokens every agent's events and arguments", async () => {
    const all = await read(APPROVER_TOKEN);
    expect(all.paths).toEqual(["ci_bot", "support", "anon"]);
    expect(all.agents).toEqual(expect.arrayContaining(["ci_bot", "support"]));
    expect((await read(PAGER)).paths).toEqual(["ci_bot", "support", "anon"]);
  });

  it("shows a named agent only the events recorded under its name", async () => {
    expect(await read(CI_BOT)).toEqual({ agents: ["ci_bot"], paths: ["ci_bot"] });
    expect(await read(SUPPORT)).toEqual({ agents: ["support"], paths: ["support"] });
    expect(await read(CI_BOT, "&agent=ci_bot")).toEqual({ agents: ["ci_bot"], paths: ["ci_bot"] });
    const other = await get("/v1/audit?agent=support", CI_BOT);
    expect(other.status).toBe(403);
    expect(await readJson(other)).toMatchObject({ error: { code: "agent_mismatch" } });
  });

  it("refuses the unnamed agents' token, whose holders share it (403 approver_token_required)", async () => {
    const res = await get("/v1/audit", ANON);
    expect(res.status).toBe(403);
    expect(await readJson(res)).toMatchObject({ error: { code: "approver_token_required" } });
  });
});
