/**
 * The servers a named agent may decide for (`serve.agent_servers`): the `server` of a request is the
 * caller's claim, which rules with `server:` trust, so an agent held to some servers may name only those
 * (another, or none, is 403 `server_not_allowed`, nothing decided or recorded).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { at, READ_EVENT, readJson, openTokenServer, type TokenServer } from "./harness.js";

const ANON = "anonymous-agents-token-0123456789";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const SUPPORT = "support-agent-token-0123456789";

let server: TokenServer;
beforeAll(async () => {
  server = await openTokenServer("agent-servers", {
    token: ANON,
    agentTokens: { ci_bot: CI_BOT, support: SUPPORT },
    agentServers: { ci_bot: ["github", "ci-*"] },
  });
});
afterAll(() => server.close());

async function recorded(): Promise<number> {
  await server.node.stores.auditLog.flush();
  return readFileSync(join(server.home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "").length;
}

async function error(res: Response): Promise<{ code: string; message: string }> {
  return at(await readJson(res), "error") as { code: string; message: string };
}

describe("an agent held to some servers", () => {
  it("decides for the servers it was given", async () => {
    for (const server_ of ["github", "ci-runner"]) {
      const res = await server.post("/v1/decide", CI_BOT, { tool: "read_x", server: server_, arguments: {} });
      expect([server_, res.status]).toEqual([server_, 200]);
    }
  });

  it("is refused another server, or none, with nothing recorded", async () => {
    const before = await recorded();
    const other = await server.post("/v1/decide", CI_BOT, { tool: "read_x", server: "payments", arguments: {} });
    expect(other.status).toBe(403);
    const body = await error(other);
    expect(body.code).toBe("server_not_allowed");
    expect(body.message).toBe(
      "agent `ci_bot` may decide only for the servers `github`, `ci-*`; the request names server `payments`",
    );
    const none = await server.post("/v1/decide", CI_BOT, { tool: "read_x", arguments: {} });
    expect([none.status, (await error(none)).code]).toEqual([403, "server_not_allowed"]);
    // a contract event names no server: /pre-tool-check is refused to such an agent
    const check = await server.post("/pre-tool-check", CI_BOT, READ_EVENT);
    expect([check.status, (await error(check)).code]).toEqual([403, "server_not_allowed"]);
    expect(await recorded()).toBe(before);
  });

  it("holds no other caller: another named agent and the anonymous token name any server", async () => {
    for (const token of [SUPPORT, ANON]) {
      const res = await server.post("/v1/decide", token, { tool: "read_x", server: "payments", arguments: {} });
      expect(res.status).toBe(200);
    }
  });

  it("refuses a scope for a name no agent's token has", async () => {
    await expect(
      openTokenServer("agent-servers-bad", { agentTokens: { ci_bot: CI_BOT }, agentServers: { nobody: ["x"] } }),
    ).rejects.toThrow(/`nobody` is no agent of the agents' tokens/);
  });
});
