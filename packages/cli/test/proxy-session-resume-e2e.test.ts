import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { connectProxy } from "./proxy-client-fixture.js";

/**
 * A session the kill switch suspended is resumed by a person, through the real `acp proxy` and `acp approve`
 * from another terminal: the next call asks whether to resume (`acp pending` lists `acp_resume_session`),
 * approved it runs and the kill switch counts afresh; denied, the session stays suspended and later calls are
 * refused without asking again.
 */
const POLICY = 'version: "1"\ndefault_action: allow\n';
const SESSION = [
  "session:",
  "  classify:",
  "    - { tool: echo, category: write }",
  "  kill_switch: { consequential_calls: 2, window_seconds: 600 }",
  "",
].join("\n");

const root = tempRoot("proxy-session-resume");
afterAll(() => root.cleanup());

interface PendingRow {
  id: string;
  server: string;
  tool: string;
  arguments: { question?: string };
}

async function pending(env: Record<string, string>): Promise<PendingRow[]> {
  const out = await runCli(["pending", "--json"], { env, now: new Date() });
  return JSON.parse(out.stdout || "[]") as PendingRow[];
}

async function waitForPending(env: Record<string, string>): Promise<PendingRow> {
  for (let i = 0; i < 400; i++) {
    const [row] = await pending(env);
    if (row !== undefined) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending request appeared");
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe("acp proxy: a person resumes a session the kill switch suspended", () => {
  it("asks on the next call; approved, it runs and the switch counts afresh; denied, later calls are refused unasked", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), POLICY);
    const file = join(home, "config.yml");
    const config = readFileSync(file, "utf8").replace(/^session:\n(?:(?:[ #].*)?\n)*/m, "");
    writeFileSync(file, `${config}${SESSION}`);
    const env = envFor(home);
    const client: Client = await connectProxy(env, { name: "resume-agent" });
    const echo = (n: number): Promise<CallToolResult> =>
      client.callTool({ name: "echo", arguments: { message: `m${n}` } }, undefined, {
        timeout: 60_000,
      }) as Promise<CallToolResult>;
    try {
      // the second write trips the switch (it still ran)
      expect((await echo(1)).isError).not.toBe(true);
      expect((await echo(2)).isError).not.toBe(true);
      // the third asks a person to resume the session
      const third = echo(3);
      const question = await waitForPending(env);
      expect([question.server, question.tool]).toEqual(["acp", "acp_resume_session"]);
      expect(question.arguments.question).toMatch(/was suspended \(2 calls so far\); resume it\?/);
      expect((await runCli(["approve", question.id], { env, now: new Date() })).code).toBe(0);
      const resumed = await third;
      expect(resumed.isError, text(resumed)).not.toBe(true);
      expect(text(resumed)).toContain("m3");
      // counted afresh from the resumption: the third and fourth run, the fourth trips it again
      expect((await echo(4)).isError).not.toBe(true);
      const fifth = echo(5);
      const again = await waitForPending(env);
      expect(again.tool).toBe("acp_resume_session");
      expect(again.id).not.toBe(question.id);
      expect((await runCli(["deny", again.id, "--reason", "stop"], { env, now: new Date() })).code).toBe(0);
      const refused = await fifth;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/^refused by the session: .*suspended/);
      // a person said no: the session stays suspended, and nobody is asked again
      const sixth = await echo(6);
      expect(sixth.isError).toBe(true);
      expect(await pending(env)).toEqual([]);
    } finally {
      await client.close();
    }
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { event_type: string; tool: string | null; metadata: Record<string, unknown> });
    const sessionEvents = events
      .filter((e) => e.event_type === "session_event")
      .map((e) => e.metadata["session_event"]);
    expect(sessionEvents.filter((t) => t === "suspended")).toHaveLength(2);
    expect(sessionEvents.filter((t) => t === "resumed")).toHaveLength(1);
    expect(events.filter((e) => e.event_type === "tool_call_forwarded" && e.tool === "echo")).toHaveLength(4);
  }, 120_000);
});
