/** Arguments a person edits in an approval are judged by the policy again before the caller may run them. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelSettlement, ConsentChannel, HumanAnswer } from "@acp/proxy";
import { at, eventually, readJson, startTestServer, type TestServer, tokenFor } from "./harness.js";

const TOKEN = "test-token-0123456789";
const POLICY = [
  'version: "1"',
  "default_action: ask",
  "rules:",
  "  - id: no-etc",
  '    match: { tool: write_file, args: { path: "/etc/**" } }',
  "    action: deny",
  "  - id: ask-home-writes",
  '    match: { tool: write_file, args: { path: "/home/**" } }',
  "    action: ask",
  "  - id: ask-writes",
  "    match: { tool: write_file }",
  "    action: ask",
  "",
].join("\n");
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN, policy: POLICY });
});
afterAll(async () => {
  await s.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A waiting `write_file` call and its consent request's id. */
async function waitingWrite(path: string, session?: string): Promise<{ id: string; call: Promise<Response> }> {
  const query = session === undefined ? "" : `&session=${session}`;
  const call = post(`/v1/decide?wait=true${query}`, { tool: "write_file", arguments: { path } });
  const id = await eventually(async () => {
    const res = await fetch(`${s.url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const list = at(await readJson(res), "requests") as { id: string; request: { action: { parameters: unknown } } }[];
    return list.find((r) => JSON.stringify(r.request.action.parameters).includes(path))?.id;
  });
  return { id, call };
}

describe("POST /v1/decide?wait=true with an approval that edits the arguments", () => {
  it("refuses the call when the policy refuses the edited arguments, and records why", async () => {
    const { id, call } = await waitingWrite("/tmp/report.txt");
    const answer = await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/etc/passwd" },
    });
    expect(answer.status).toBe(200);
    const body = await readJson(await call);
    expect(body).toMatchObject({
      route: "refuse",
      consent: {
        outcome: "approved",
        arguments: { path: "/etc/passwd" },
        edit_refused: { rule: "policy:no-etc" },
      },
    });
    await s.stores.auditLog.flush();
    const page = await s.stores.audit.list({ limit: 1000, eventType: "policy_evaluated" });
    expect(JSON.stringify(page.events)).toContain('"edited_arguments":true');
  });

  it("lets an edit the policy allows through (route accept, the edited arguments)", async () => {
    const { id, call } = await waitingWrite("/tmp/draft.txt");
    await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/tmp/final.txt" },
    });
    expect(await readJson(await call)).toMatchObject({
      route: "accept",
      consent: { outcome: "approved", arguments: { path: "/tmp/final.txt" } },
    });
  });

  it("POST /v1/consent/{id}/complete says denied, naming the rule, for an edit the policy refuses", async () => {
    const id = "cr_00000000000000000000000000000e1d";
    const now = Date.now();
    // a request whose waiting call is gone (its node was restarted)
    await s.stores.pending.insert({
      id,
      nonce: "n_00000000-0000-4000-8000-0000000e1d01",
      sessionId: "s",
      server: "fs",
      tool: "write_file",
      request: {
        type: "consent_request",
        version: "0.2.0",
        id,
        timestamp: new Date(now).toISOString(),
        expires_at: new Date(now + 120_000).toISOString(),
        agent: { id: "agent-1", name: "agent-1", command: "" },
        action: {
          tool: "write_file",
          server: "fs",
          category: "write",
          risk_level: "medium",
          parameters: { path: "/tmp/notes.txt" },
          description: "call `write_file` on `fs`",
        },
        policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
        nonce: "n_00000000-0000-4000-8000-0000000e1d01",
      },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 120_000,
    });
    const answered = await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/etc/shadow" },
    });
    expect(answered.status).toBe(200);
    const completed = await readJson(await post(`/v1/consent/${id}/complete`, {}));
    expect(completed).toMatchObject({
      outcome: "denied",
      arguments: { path: "/etc/shadow" },
      edit_refused: { rule: "policy:no-etc" },
    });
    expect(completed).not.toHaveProperty("ask_again");
    expect(String(at(completed, "reason"))).toMatch(
      /^approved with edits, but the edited arguments are refused by policy rule `no-etc`/,
    );
  });
});

/** The pending consent request whose parameters name `path`, once it exists. */
async function pendingFor(path: string): Promise<{ id: string; request: { policy: { rule_id: string } } }> {
  return eventually(async () => {
    const res = await fetch(`${s.url}/v1/consent?status=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const list = at(await readJson(res), "requests") as {
      id: string;
      request: { action: { parameters: unknown }; policy: { rule_id: string } };
    }[];
    return list.find((r) => JSON.stringify(r.request.action.parameters).includes(path));
  });
}

describe("an edit that lands under an ask rule the person was not asked about", () => {
  it("POST /v1/decide?wait=true asks again about the edited arguments, under that rule; its approval runs them", async () => {
    const { id, call } = await waitingWrite("/tmp/plain.txt");
    await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/home/alice/.bashrc" },
    });
    const again = await pendingFor("/home/alice/.bashrc");
    expect(again.id).not.toBe(id);
    expect(again.request.policy.rule_id).toBe("policy:ask-home-writes");
    expect((await post(`/v1/consent/${again.id}/response`, { decision: "approved" })).status).toBe(200);
    expect(await readJson(await call)).toMatchObject({
      route: "accept",
      decision: { rule: "policy:ask-home-writes" },
      consent: { outcome: "approved", request_id: again.id, arguments: { path: "/home/alice/.bashrc" } },
    });
    await s.stores.auditLog.flush();
    const page = await s.stores.audit.list({ limit: 1000, eventType: "policy_evaluated" });
    // the re-decision that raised the new question is on the record
    const rejudged = page.events.map((e) => JSON.stringify(e)).filter((e) => e.includes('"edited_arguments":true'));
    expect(rejudged.some((e) => e.includes('"decision":"ask"') && e.includes('"policy:ask-home-writes"'))).toBe(true);
  });

  it("a re-asked edit onto arguments this session approved for the session is answered by that approval", async () => {
    const first = post("/v1/decide?wait=true&session=edit-s1", {
      tool: "write_file",
      arguments: { path: "/home/dave/notes.txt" },
    });
    const asked = await pendingFor("/home/dave/notes.txt");
    await post(`/v1/consent/${asked.id}/response`, { decision: "approved", scope: "session" });
    expect(await readJson(await first)).toMatchObject({ route: "accept" });
    // same session: an edit onto the approved arguments, under ask-home-writes, is not put to anyone again
    const { id, call } = await waitingWrite("/tmp/dave-draft.txt", "edit-s1");
    await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/home/dave/notes.txt" },
    });
    expect(await readJson(await call)).toMatchObject({
      route: "accept",
      decision: { rule: "policy:ask-home-writes" },
      consent: { outcome: "approved", request_id: asked.id, arguments: { path: "/home/dave/notes.txt" } },
    });
    // another session is asked
    const other = await waitingWrite("/tmp/dave-other.txt", "edit-s2");
    await post(`/v1/consent/${other.id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/home/dave/notes.txt" },
    });
    const again = await eventually(async () => {
      const found = await pendingFor("/home/dave/notes.txt");
      return found.id !== asked.id ? found : undefined;
    });
    await post(`/v1/consent/${again.id}/response`, { decision: "denied", reason: "other session" });
    expect(await readJson(await other.call)).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });

  it("a no to the new question refuses the call", async () => {
    const { id, call } = await waitingWrite("/tmp/other.txt");
    await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/home/bob/.profile" },
    });
    const again = await pendingFor("/home/bob/.profile");
    await post(`/v1/consent/${again.id}/response`, { decision: "denied", reason: "not there" });
    expect(await readJson(await call)).toMatchObject({ route: "refuse", consent: { outcome: "denied" } });
  });

  it("POST /v1/consent/{id}/complete says ask_again (not edit_refused), naming the rule nobody was asked about", async () => {
    const id = "cr_00000000000000000000000000000e2d";
    const now = Date.now();
    await s.stores.pending.insert({
      id,
      nonce: "n_00000000-0000-4000-8000-0000000e2d01",
      sessionId: "s",
      server: "fs",
      tool: "write_file",
      request: {
        type: "consent_request",
        version: "0.2.0",
        id,
        timestamp: new Date(now).toISOString(),
        expires_at: new Date(now + 120_000).toISOString(),
        agent: { id: "agent-1", name: "agent-1", command: "" },
        action: {
          tool: "write_file",
          server: "fs",
          category: "write",
          risk_level: "medium",
          parameters: { path: "/tmp/notes.txt" },
          description: "call `write_file` on `fs`",
        },
        policy: { rule_id: "policy:ask-writes", rule_name: "ask-writes", required_level: "medium" },
        nonce: "n_00000000-0000-4000-8000-0000000e2d01",
      },
      reasons: [],
      createdAtMs: now,
      expiresAtMs: now + 120_000,
    });
    await post(`/v1/consent/${id}/response`, {
      decision: "approved_with_modifications",
      modifications: { path: "/home/carol/notes.txt" },
    });
    const completed = await readJson(await post(`/v1/consent/${id}/complete`, {}));
    // nothing runs (denied: a caller that runs only `approved` stays closed), and the answer says the edit
    // is a question to ask, not a refusal: the rule, its level and why
    expect(completed).toMatchObject({
      outcome: "denied",
      arguments: { path: "/home/carol/notes.txt" },
      ask_again: { rule: "policy:ask-home-writes", level: expect.any(String) as string },
    });
    expect(completed).not.toHaveProperty("edit_refused");
    const reasons = (at(completed, "ask_again") as { reasons: string[] }).reasons;
    expect(reasons[0]).toMatch(
      /^a person approved with edits; the edited arguments fall under policy rule `ask-home-writes`/,
    );
    expect(String(at(completed, "reason"))).toBe(
      "approved with edits, but the edited arguments fall under policy rule `ask-home-writes`, which the person who edited them was not asked about: not run (ask_again: decide again with the edited arguments to ask it)",
    );
    // deciding again with the edited arguments asks that question
    const decided = await readJson(
      await post("/v1/decide", { tool: "write_file", arguments: at(completed, "arguments") }),
    );
    expect(decided).toMatchObject({ route: "ask", decision: { rule: "policy:ask-home-writes" } });
  });
});

describe("acp serve's other channels, told of an approval with edits", () => {
  it("hear `edit_refused` with the rule when the policy refuses the edited arguments, not `approved`", async () => {
    const settled: { outcome: ChannelSettlement; reason?: string }[] = [];
    // a channel nobody answers on (a webhook receiver, a Telegram chat): it only hears how each request ended
    const watching: ConsentChannel = {
      name: "webhook",
      isAvailable: () => true,
      deliver: (delivery) =>
        new Promise<HumanAnswer>((_resolve, reject) => {
          delivery.signal.addEventListener("abort", () => reject(new Error("answered elsewhere")), { once: true });
        }),
      settle: (_request, outcome, _by, reason) => {
        settled.push({ outcome, ...(reason !== undefined ? { reason } : {}) });
      },
    };
    const own = await startTestServer({ token: TOKEN, policy: POLICY, extraChannels: [watching] });
    try {
      const send = (path: string, body: unknown) =>
        fetch(`${own.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokenFor(path, TOKEN)}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const call = send("/v1/decide?wait=true", { tool: "write_file", arguments: { path: "/tmp/a.txt" } });
      const id = await eventually(async () => {
        const res = await fetch(`${own.url}/v1/consent?status=pending`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        return (at(await readJson(res), "requests", 0, "id") as string | undefined) ?? null;
      });
      const answer = await send(`/v1/consent/${id}/response`, {
        decision: "approved_with_modifications",
        modifications: { path: "/etc/passwd" },
      });
      expect(answer.status).toBe(200);
      expect(await readJson(await call)).toMatchObject({
        route: "refuse",
        consent: { edit_refused: { rule: "policy:no-etc" } },
      });
      expect(settled).toEqual([
        { outcome: "edit_refused", reason: expect.stringMatching(/^refused by policy rule `no-etc`/) as string },
      ]);
    } finally {
      await own.close();
    }
  });
});
