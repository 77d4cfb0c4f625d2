/**
 * `POST /v1/consent/{id}/complete` takes the approval of a request (its nonce is spent once): a request raised
 * with a token that names its agent completes only with that token, and one raised with the anonymous agents'
 * token only with that one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVER_TOKEN, at, eventually, readJson, openTokenServer, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const ALICE = "alice-bot-token-0123456789abcdef";

let url: string;
let post: TokenServer["post"];
let close: () => Promise<void>;
beforeAll(async () => {
  ({ url, post, close } = await openTokenServer("agent-complete", {
    token: ANON,
    agentTokens: { alice_bot: ALICE },
  }));
});
afterAll(() => close());

async function pendingIds(): Promise<string[]> {
  // the approvers' token reads every request (an agent's token only those raised with it)
  const res = await fetch(`${url}/v1/consent?status=pending`, {
    headers: { authorization: `Bearer ${APPROVER_TOKEN}` },
  });
  return (at(await readJson(res), "requests") as { id: string }[]).map((r) => r.id);
}

describe("POST /v1/consent/{id}/complete and the token that raised the request", () => {
  it("the anonymous token cannot complete a named agent's request; the agent's own call gets the approval", async () => {
    const call = post("/v1/decide?wait=true&session=s1", ALICE, {
      tool: "write_file",
      arguments: { path: "/tmp/complete-named" },
    });
    const id = await eventually(async () => (await pendingIds())[0]);
    // even claiming the agent in the body changes nothing: the body of /complete is not read
    const taken = await post(`/v1/consent/${id}/complete`, ANON, { agent: "alice_bot" });
    expect(taken.status).toBe(403);
    const error = at(await readJson(taken), "error") as { code: string; message: string };
    expect(error.code).toBe("agent_mismatch");
    expect(error.message).toContain("`alice_bot`");
    expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "approved" })).status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "accept", consent: { request_id: id } });
  });

  it("a named agent cannot complete a request raised with the anonymous token; the anonymous token can", async () => {
    const call = post("/v1/decide?wait=true&session=s2", ANON, {
      tool: "write_file",
      arguments: { path: "/tmp/complete-anonymous" },
      agent: "helper",
    });
    const id = await eventually(async () => (await pendingIds())[0]);
    const named = await post(`/v1/consent/${id}/complete`, ALICE, {});
    expect(named.status).toBe(403);
    expect(at(await readJson(named), "error", "message")).toContain("anonymous agents' token");
    expect((await post(`/v1/consent/${id}/response`, APPROVER_TOKEN, { decision: "denied" })).status).toBe(200);
    expect(await readJson(await call)).toMatchObject({ route: "refuse" });
    // the token it was raised with: not refused for ownership (the waiting call already completed it)
    expect((await post(`/v1/consent/${id}/complete`, ANON, {})).status).not.toBe(403);
  });
});
