import { describe, expect, it } from "vitest";
import type { ConsentAsk, ConsentBroker, ConsentOutcome } from "@acp/proxy";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

/**
 * The kill switch holds an agent with a token of its own (`proxy.agent_tokens`) across its sessions: a new
 * session of an agent whose earlier session was suspended and not resumed starts suspended (opening another
 * MCP session does not reset the switch), asks a person to resume it, and after a person said no is refused
 * without asking again. Sessions of other agents, and sessions without a token of their own, start afresh.
 */
const SEND = { server: "mail", tool: "send_email", arguments: { to: "me@example.com" } };
const NOW = new Date("2026-01-15T12:00:00Z");

function setup(answer: () => ConsentOutcome["kind"]) {
  const asked: ConsentAsk[] = [];
  const broker: ConsentBroker = {
    ask: (ask) => {
      asked.push(ask);
      const kind = answer();
      return Promise.resolve(
        kind === "approved"
          ? { kind, arguments: ask.arguments, consentResponse: {}, scope: "once" }
          : kind === "denied"
            ? { kind, reason: "no" }
            : { kind },
      );
    },
  };
  const audit: { type: string; fields: Record<string, unknown> }[] = [];
  const runtime = createProxySessionRuntime({
    trustedServers: [],
    classify: [],
    settings: { kill_switch: { consequential_calls: 1, window_seconds: 600 } },
    now: () => NOW,
    broker: () => broker,
    record: (type, fields) => void audit.push({ type, fields }),
  });
  /** Decides and, when accepted, runs `SEND` in session `id` of `agent`: the route. */
  const send = async (id: string, agent?: string): Promise<string | undefined> => {
    const verdict = await runtime.sourceFor(id, agent).evaluate(SEND, NOW);
    if (verdict?.route === "accept") runtime.observer.executed(id, SEND);
    return verdict?.route;
  };
  return { runtime, asked, audit, send };
}

describe("the kill switch across an agent's sessions", () => {
  it("a new session of a suspended agent starts suspended and asks to resume; approved, it runs", async () => {
    const { asked, audit, send } = setup(() => "approved");
    expect(await send("s1", "alice")).toBe("accept");
    expect(await send("s2", "alice")).toBe("accept");
    expect(asked.map((a) => a.tool)).toEqual(["acp_resume_session"]);
    const suspended = audit.filter((e) => e.fields["session_event"] === "suspended");
    expect(suspended.map((e) => e.fields["session_id"])).toEqual(["s1", "s2", "s2"]);
    expect(String(suspended[1]?.fields["message"])).toMatch(/earlier session of agent `alice`/);
  });

  it("after a person said no, a new session of that agent is refused without asking; others start afresh", async () => {
    const { asked, send } = setup(() => "denied");
    expect(await send("s1", "alice")).toBe("accept");
    expect(await send("s1", "alice")).toBe("refuse");
    expect(asked).toHaveLength(1);
    expect(await send("s2", "alice")).toBe("refuse");
    expect(await send("s3", "alice")).toBe("refuse");
    expect(asked).toHaveLength(1);
    // another agent, and a session with no token of its own, are not held by alice's switch
    expect(await send("s4", "bob")).toBe("accept");
    expect(await send("s5")).toBe("accept");
  });

  it("the question waits the configured consent timeout, and is withdrawn when the agent disconnects", async () => {
    const asked: ConsentAsk[] = [];
    const runtime = createProxySessionRuntime({
      trustedServers: [],
      classify: [],
      settings: { kill_switch: { consequential_calls: 1, window_seconds: 600 } },
      now: () => NOW,
      consentTimeoutMs: 45_000,
      broker: () => ({
        ask: (ask) => {
          asked.push(ask);
          // nobody answers: the question ends when it is withdrawn
          return new Promise((resolve) => ask.signal.addEventListener("abort", () => resolve({ kind: "expired" })));
        },
      }),
    });
    expect((await runtime.sourceFor("s1").evaluate(SEND as never, NOW))?.route).toBe("accept");
    runtime.observer.executed("s1", SEND);
    const waiting = runtime.sourceFor("s1").evaluate(SEND, NOW);
    await new Promise((r) => setImmediate(r));
    expect(asked.map((a) => [a.tool, a.timeoutMs, a.signal.aborted])).toEqual([["acp_resume_session", 45_000, false]]);
    runtime.observer.closed?.("s1");
    expect(asked[0]?.signal.aborted).toBe(true);
    expect((await waiting)?.route).toBe("refuse");
  });

  it("nobody answering keeps the agent suspended, and its next session asks again", async () => {
    const { asked, send } = setup(() => "expired");
    expect(await send("s1", "alice")).toBe("accept");
    expect(await send("s2", "alice")).toBe("refuse");
    expect(await send("s3", "alice")).toBe("refuse");
    expect(asked).toHaveLength(2);
  });
});
