/**
 * Approvals "for this session" and "for a while" cover only the agent they were given to: another named
 * agent's token making the same call is asked; the anonymous agents' token cannot name a session in a named
 * agent's namespace (`NAME/…`: 400) nor claim a named agent's name in the body (403 `agent_mismatch`, so it
 * reuses none of its approvals); a reused approval is audited as the call being decided, the approved request
 * named apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedServer } from "@acp/server";
import { APPROVER_TOKEN, at, eventually, readJson, openTokenServer, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const ALICE = "alice-bot-token-0123456789abcdef";
const EVIL = "evil-bot-token-0123456789abcdef";

let home: string;
let node: EmbeddedServer;
let url: string;
let post: TokenServer["post"];
let close: () => Promise<void>;
beforeAll(async () => {
  ({ home, node, url, post, close } = await openTokenServer("agent-grants", {
    token: ANON,
    agentTokens: { alice_bot: ALICE, evil_bot: EVIL },
  }));
});
afterAll(() => close());

interface AuditEvent {
  event_type: string;
  agent: string | null;
  request_id?: string;
  session_id?: string;
  metadata?: Record<string, unknown>;
}

async function events(): Promise<AuditEvent[]> {
  await node.stores.auditLog.flush();
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as AuditEvent);
}

async function pendingIds(): Promise<string[]> {
  // the approvers' token reads every request (an agent's token only those raised with it)
  const res = await fetch(`${url}/v1/consent?status=pending`, {
    headers: { authorization: `Bearer ${APPROVER_TOKEN}` },
  });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

/** Raises the call, waits until a person is asked, and has them answer `answer`; the call's answer. */
async function askAndAnswer(path: string, token: string, body: unknown, answer: unknown): Promise<unknown> {
  const call = post(path, token, body);
  const id = await eventually(async () => (await pendingIds())[0]);
  expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, answer)).status).toBe(200);
  return readJson(await call);
}

/** The call's answer when nobody is asked (an approval was reused): it must not wait for a person. */
async function reused(path: string, token: string, body: unknown): Promise<unknown> {
  const answer = await readJson(await post(path, token, body));
  expect(await pendingIds()).toEqual([]);
  return answer;
}

describe("approvals of wider scope and the agent they were given to", () => {
  it("a window approval given to alice_bot is not reused by evil_bot, nor by the anonymous token claiming alice_bot", async () => {
    const call = { tool: "write_file", arguments: { path: "/tmp/agent-grants-window" } };
    const first = await askAndAnswer("/v1/decide?wait=true&session=s1", ALICE, call, {
      decision: "approved",
      scope: { for: "1h" },
    });
    expect(first).toMatchObject({ route: "accept" });
    const approvedId = at(first, "consent", "request_id") as string;
    // alice_bot, in another session: covered, nobody asked
    const again = await reused("/v1/decide?wait=true&session=s2", ALICE, call);
    expect(again).toMatchObject({ route: "accept", consent: { request_id: approvedId } });
    // evil_bot, the same call: asked (denied here)
    expect(await askAndAnswer("/v1/decide?wait=true&session=zzz", EVIL, call, { decision: "denied" })).toMatchObject({
      route: "refuse",
    });
    // the anonymous token naming alice_bot in the body: refused outright, nobody asked, nothing reused
    const claimed = await post("/v1/decide?wait=true&session=zzz", ANON, { ...call, agent: "alice_bot" });
    expect(claimed.status).toBe(403);
    expect(at(await readJson(claimed), "error", "code")).toBe("agent_mismatch");
    expect(await pendingIds()).toEqual([]);
  });

  it("the anonymous token cannot name a session in a named agent's namespace (400, nothing recorded)", async () => {
    const call = { tool: "write_file", arguments: { path: "/tmp/agent-grants-session" } };
    expect(
      await askAndAnswer("/v1/decide?wait=true&session=s1", ALICE, call, { decision: "approved", scope: "session" }),
    ).toMatchObject({ route: "accept" });
    const before = (await events()).length;
    for (const agent of ["mallory", "alice_bot"]) {
      const res = await post("/v1/decide?wait=true&session=alice_bot/s1", ANON, { ...call, agent });
      expect(res.status).toBe(400);
      const error = at(await readJson(res), "error") as { code: string; message: string };
      expect(error.code).toBe("invalid_query");
      expect(error.message).toContain("`/`");
    }
    expect((await events()).length).toBe(before);
    expect(await pendingIds()).toEqual([]);
    // alice_bot's own session still reuses it
    expect(await reused("/v1/decide?wait=true&session=s1", ALICE, call)).toMatchObject({ route: "accept" });
  });

  it("a reused approval's audit names the agent of the call decided and the approved request apart", async () => {
    const call = { tool: "write_file", arguments: { path: "/tmp/agent-grants-audit" } };
    const first = await askAndAnswer("/v1/decide?wait=true&session=a1", ALICE, call, {
      decision: "approved",
      scope: { for: "1h" },
    });
    const approvedId = at(first, "consent", "request_id") as string;
    expect(await reused("/v1/decide?wait=true&session=a2", ALICE, call)).toMatchObject({ route: "accept" });
    const reuse = (await events()).filter((e) => e.event_type === "consent_approved").at(-1);
    expect(reuse).toMatchObject({ agent: "alice_bot" });
    expect(reuse?.metadata).toMatchObject({
      reused: true,
      approved_request_id: approvedId,
      approved_agent: "alice_bot",
    });
    // one mark for a reused approval, the one acp proxy writes: not a second name for it
    expect(reuse?.metadata).not.toHaveProperty("reused_approval");
  });
});
