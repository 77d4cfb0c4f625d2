/**
 * `openEmbeddedServer` checks its inputs before it opens a store: a bad token set (or public URL, or agents'
 * servers) is told as that, and a fresh home stays empty; a home whose audit log another key signed still
 * reports the token problem, not the audit log's.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTestServerAt, testKeys } from "./harness.js";

const AGENT = "agent-token-0123456789abcdef";
const APPROVER = "approver-token-0123456789abcdef";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-embedded-inputs-"));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

describe("openEmbeddedServer with inputs it cannot serve", () => {
  it.each([
    [
      "an agent's token that is also the agents' bearer token",
      { token: AGENT, agentTokens: { ci_bot: AGENT } },
      /the token of `ci_bot` is also another token/,
    ],
    [
      "an approver's token that is also an agent's",
      { agentTokens: { ci_bot: AGENT }, approverTokens: { alice: AGENT } },
      /the token of `alice` is also another token/,
    ],
    ["a token name that is no name", { agentTokens: { "CI Bot": AGENT } }, /token name `CI Bot`/],
    [
      "one token for agents and approvers",
      { token: AGENT, approverToken: AGENT },
      /must differ from the agents' bearer token/,
    ],
    [
      "servers for an agent with no token",
      { agentTokens: { ci_bot: AGENT }, agentServers: { nobody: ["github"] } },
      /`nobody` is no agent of the agents' tokens/,
    ],
    ["a public URL with a path", { publicUrl: "https://acp.example.com/acp" }, /public URL:/],
    [
      "a TLS key and certificate that are none",
      { tls: { key: "not a key", cert: "not a certificate" } },
      /tls: the key and certificate cannot serve HTTPS/,
    ],
  ] as const)("refuses %s and creates no file in a fresh home", async (_name, options, message) => {
    await expect(openTestServerAt(home, { approverToken: APPROVER, ...options })).rejects.toThrow(message);
    expect(readdirSync(home)).toEqual([]);
  });

  it("refuses a missing any-server pipeline before the state database exists", async () => {
    await expect(
      openTestServerAt(home, { anyServerPipeline: undefined as never, approverToken: APPROVER }),
    ).rejects.toThrow(/anyServerPipeline is required/);
    expect(existsSync(join(home, "state.db"))).toBe(false);
  });

  it("reports the token problem, not the audit log's, in a home another key signed", async () => {
    const first = await openTestServerAt(home, { token: AGENT, approverToken: APPROVER, keys: testKeys() });
    try {
      const decided = await fetch(`${first.url}/v1/decide`, {
        method: "POST",
        headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json" },
        body: JSON.stringify({ tool: "read_file", arguments: { path: "README.md" } }),
      });
      expect(decided.status).toBe(200);
    } finally {
      await first.node.close();
    }
    const before = readdirSync(home).sort();
    expect(before).toContain("audit.jsonl");
    // a fresh key (as a caller that mislaid the home's key would pass) and a duplicated token
    await expect(
      openTestServerAt(home, {
        token: AGENT,
        agentTokens: { ci_bot: AGENT },
        approverToken: APPROVER,
        keys: testKeys(),
      }),
    ).rejects.toThrow(/the token of `ci_bot` is also another token/);
    expect(readdirSync(home).sort()).toEqual(before);
  });
});
