import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isGuardRefusal, openGuard } from "../src/index.js";
import { envFor, fixtureHome, PASSPHRASE, tempRoot } from "./home-fixture.js";
import { connectProxy } from "./proxy-client-fixture.js";

/**
 * An agent's parallel calls are counted together (session runtime spec REV §1.3): each call the gate lets
 * through is counted by the session before it is forwarded, so calls in flight side by side are each judged
 * with the others counted. Under `kill_switch: {consequential_calls: 2}` five writes sent at once run twice:
 * the second suspends the session, and the three still waiting are refused by the session, never forwarded.
 * Before, the proxy told the session a call ran only when its result came, and all five ran.
 */
const POLICY = 'version: "1"\ndefault_action: allow\n';
// server-everything's tool sleeps `duration` seconds: the five are in flight together whatever the machine's speed
const SLOW = "trigger-long-running-operation";
const SESSION = [
  "session:",
  "  classify:",
  `    - { tool: ${SLOW}, category: write }`,
  "    - { tool: count_me, category: write }",
  "  kill_switch: { consequential_calls: 2, window_seconds: 600 }",
  "",
].join("\n");

const root = tempRoot("proxy-parallel-calls");
afterAll(() => root.cleanup());

function homeWithKillSwitch(): string {
  const { home } = fixtureHome(root.dir);
  writeFileSync(join(home, "policy.yml"), POLICY);
  const file = join(home, "config.yml");
  const text = readFileSync(file, "utf8").replace(/^session:\n(?:(?:[ #].*)?\n)*/m, "");
  writeFileSync(file, `${text}${SESSION}`);
  return home;
}

function events(home: string): { event_type: string; tool: string | null; metadata: Record<string, unknown> }[] {
  return readFileSync(join(home, "audit.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { event_type: string; tool: string | null; metadata: Record<string, unknown> });
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe("parallel calls are counted together", () => {
  it("acp proxy: five writes sent at once under a kill switch of two: two run, three are refused by the session", async () => {
    const home = homeWithKillSwitch();
    const client = await connectProxy(envFor(home), { name: "parallel-agent" });
    let results: CallToolResult[];
    try {
      results = (await Promise.all(
        Array.from({ length: 5 }, () =>
          client.callTool({ name: SLOW, arguments: { duration: 1, steps: 1 } }, undefined, { timeout: 60_000 }),
        ),
      )) as CallToolResult[];
    } finally {
      await client.close();
    }
    const ran = results.filter((r) => r.isError !== true);
    const refused = results.filter((r) => r.isError === true);
    expect(ran).toHaveLength(2);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expect(textOf(r)).toMatch(/^refused by the session: /);
      expect(textOf(r)).toMatch(/suspended/);
      const decision = r._meta?.["acp/decision"] as { route: string; reasons: { source: string; code: string }[] };
      expect(decision.route).toBe("refuse");
      expect(decision.reasons.map((x) => x.code)).toContain("session_suspended");
    }
    // the audit says the same: two forwarded, three refused after they were decided, none forwarded
    const log = events(home).filter((e) => e.tool === SLOW);
    expect(log.filter((e) => e.event_type === "policy_evaluated")).toHaveLength(5);
    expect(log.filter((e) => e.event_type === "tool_call_forwarded")).toHaveLength(2);
    expect(log.filter((e) => e.event_type === "tool_call_completed")).toHaveLength(2);
    const refusals = log.filter((e) => e.event_type === "tool_call_refused");
    expect(refusals).toHaveLength(3);
    for (const e of refusals) {
      expect((e as { decision?: unknown }).decision).toBe("refuse");
      expect(JSON.stringify(e.metadata["reasons"])).toContain("session_suspended");
    }
    // the session's own event is in the chain too: suspended by the kill switch, under the calls' session id
    const sessionEvents = events(home).filter((e) => e.event_type === "session_event");
    const suspended = sessionEvents.filter((e) => e.metadata["session_event"] === "suspended");
    expect(suspended).toHaveLength(1);
    expect(String(suspended[0]?.metadata["message"])).toMatch(/kill switch/);
    expect(suspended[0]?.metadata["session_id"]).toBe(refusals[0]?.metadata["session_id"]);
  }, 120_000);

  it("openGuard: five guarded writes awaited together under the same kill switch: two functions run", async () => {
    const home = homeWithKillSwitch();
    const guard = await openGuard({ home, passphrase: PASSPHRASE, log: () => undefined });
    let runs = 0;
    try {
      const countMe = guard.guard("count_me", async (args: { n: number }) => {
        runs += 1;
        expect(args.n).toBeGreaterThanOrEqual(0);
        // still running while the others are decided
        await new Promise((r) => setTimeout(r, 200));
        return "counted";
      });
      const settled = await Promise.allSettled(Array.from({ length: 5 }, (_, n) => countMe({ n })));
      const refused: unknown[] = settled.flatMap((s) => (s.status === "rejected" ? [s.reason as unknown] : []));
      expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(2);
      expect(refused).toHaveLength(3);
      for (const err of refused) {
        expect(isGuardRefusal(err)).toBe(true);
        expect((err as { stop: string }).stop).toBe("refused");
        expect((err as { ran: boolean }).ran).toBe(false);
        expect((err as Error).message).toMatch(/^refused by the session: /);
      }
      expect(runs).toBe(2);
    } finally {
      await guard.close();
    }
    expect(events(home).filter((e) => e.event_type === "tool_call_refused" && e.tool === "count_me")).toHaveLength(3);
  }, 60_000);

  it("openGuard: a suspended session asks `ask` to resume; approved, the call runs; denied, later calls are refused unasked", async () => {
    const home = homeWithKillSwitch();
    const asked: string[] = [];
    let answer = true;
    const guard = await openGuard({
      home,
      passphrase: PASSPHRASE,
      log: () => undefined,
      ask: ({ request }) => {
        asked.push(request.action.tool);
        return Promise.resolve(answer);
      },
    });
    try {
      const countMe = guard.guard("count_me", (args: { n: number }) => `counted ${args.n}`);
      expect(await countMe({ n: 1 })).toBe("counted 1");
      expect(await countMe({ n: 2 })).toBe("counted 2");
      // suspended after the second: the third asks to resume, and runs once approved
      expect(await countMe({ n: 3 })).toBe("counted 3");
      expect(asked).toEqual(["acp_resume_session"]);
      // counted afresh: the fourth trips the switch again; the fifth asks, is denied, and is refused
      expect(await countMe({ n: 4 })).toBe("counted 4");
      answer = false;
      const fifth = await countMe({ n: 5 }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isGuardRefusal(fifth)).toBe(true);
      expect((fifth as Error).message).toMatch(/^refused by the session: .*suspended/);
      expect(asked).toEqual(["acp_resume_session", "acp_resume_session"]);
      await expect(countMe({ n: 6 })).rejects.toThrow(/refused by the session/);
      expect(asked).toHaveLength(2);
    } finally {
      await guard.close();
    }
  }, 60_000);
});
