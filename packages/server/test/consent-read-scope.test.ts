/**
 * Who reads which consent requests: an agent's token reads only the requests raised with it (a named agent's
 * its own, the anonymous agents' token those raised with it), so one agent cannot read the arguments of
 * another's calls; the approvers' tokens read every request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, eventually, openTokenServer, readJson, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const SUPPORT = "support-agent-token-0123456789";
const PAGER = "pager-approver-token-0123456789";

let s: TokenServer;
let waits: Promise<Response>[] = [];
/** The request each caller raised, by caller. */
const raised = new Map<string, string>();

beforeAll(async () => {
  s = await openTokenServer("consent-read-scope", {
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
    waits.push(s.post("/v1/decide?wait=true", token, { tool: "write_file", arguments: { path: `/tmp/${caller}` } }));
    const id = await eventually(async () =>
      (await s.node.stores.pending.listPending(Date.now())).map((r) => r.id).find((id) => !before.has(id)),
    );
    raised.set(caller, id);
  }
});

afterAll(async () => {
  for (const row of await s.node.stores.pending.listPending(Date.now())) {
    await s.node.stores.pending.decide(
      row.id,
      "denied",
      { decision: "denied", approver: "t", nonce: row.nonce },
      Date.now(),
    );
  }
  await Promise.all(waits);
  waits = [];
  await s.close();
});

function get(path: string, token: string): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
}

async function listed(token: string): Promise<string[]> {
  const res = await get("/v1/consent", token);
  expect(res.status).toBe(200);
  return ((await readJson(res)) as { requests: { id: string }[] }).requests.map((r) => r.id).sort();
}

describe("reading consent requests", () => {
  it("lists to a named agent only its own requests, and to the anonymous token only those raised with it", async () => {
    expect(await listed(CI_BOT)).toEqual([raised.get("ci_bot")]);
    expect(await listed(SUPPORT)).toEqual([raised.get("support")]);
    expect(await listed(ANON)).toEqual([raised.get("anon")]);
  });

  it("lists every request to the approvers' tokens", async () => {
    const all = [...raised.values()].sort();
    expect(await listed(APPROVER_TOKEN)).toEqual(all);
    expect(await listed(PAGER)).toEqual(all);
  });

  it("answers another caller's request by id as unknown (404), its own as ever", async () => {
    const mine = await get(`/v1/consent/${raised.get("ci_bot") ?? ""}`, CI_BOT);
    expect(mine.status).toBe(200);
    expect(await readJson(mine)).toMatchObject({ request: { action: { parameters: { path: "/tmp/ci_bot" } } } });
    for (const [token, other] of [
      [CI_BOT, "support"],
      [CI_BOT, "anon"],
      [ANON, "ci_bot"],
    ] as const) {
      const res = await get(`/v1/consent/${raised.get(other) ?? ""}`, token);
      expect(res.status).toBe(404);
      expect(await readJson(res)).toMatchObject({ error: { code: "consent_request_unknown" } });
    }
    expect((await get(`/v1/consent/${raised.get("support") ?? ""}`, APPROVER_TOKEN)).status).toBe(200);
  });
});
