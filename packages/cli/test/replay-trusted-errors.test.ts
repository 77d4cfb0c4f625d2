import { describe, expect, it } from "vitest";
import { parsePolicy, type ActionRequest } from "@acp/core";
import { createReplayer } from "../src/replay/driver.js";
import { createReplaySessions } from "../src/replay/session-runtime.js";
import type { ReplaySession, ReplaySessionFactory } from "../src/replay/session-seam.js";
import { parseTraceText } from "../src/replay/trace.js";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

// Since 8857a64 acp proxy records a trusted server's error as untrusted text (it speaks of the call, not for
// the server). acp replay passed an explicit `trusted: true` for every result of a --trusted-server, so a
// replayed error still vouched. The same answer and error, live and replayed, now get the same labels.

const NOW = new Date("2026-01-15T12:00:00Z");
const ANSWER = "payees: DE89 3704 0044 0532 0130 00";
const ERROR_TEXT = "payee DE44 5001 0517 5407 3249 31 not found";

function liveLabels(): string[] {
  const runtime = createProxySessionRuntime({ trustedServers: ["bank"], classify: [], now: () => NOW });
  const read: ActionRequest = { server: "bank", tool: "lookup", arguments: {}, annotations: { readOnlyHint: true } };
  void runtime.sourceFor("s1").evaluate(read, NOW, []);
  // as acp proxy tells it: the text of the result, and `error: true` for a result with isError
  runtime.observer.result("s1", "bank", "lookup", ANSWER);
  runtime.observer.result("s1", "bank", "lookup", ERROR_TEXT, { error: true });
  return (runtime.sessionOf("s1")?.provenance ?? [])
    .filter((e) => e.source.startsWith("bank.lookup"))
    .map((e) => e.label);
}

async function replayedLabels(): Promise<string[]> {
  const policy = parsePolicy('version: "1"\ndefault_action: allow\nrules: []\n');
  if (!policy.ok) throw new Error("bad test policy");
  const made: ReplaySession[] = [];
  const real = createReplaySessions({ trustedServers: ["bank"], now: NOW });
  const sessions: ReplaySessionFactory = (name) => {
    const session = real(name);
    made.push(session);
    return session;
  };
  const events = [
    { type: "tool_call", server: "bank", tool: "lookup", args: {} },
    { type: "tool_result", server: "bank", tool: "lookup", content: ANSWER },
    { type: "tool_call", server: "bank", tool: "lookup", args: {} },
    {
      type: "tool_result",
      server: "bank",
      tool: "lookup",
      content: { isError: true, content: [{ type: "text", text: ERROR_TEXT }] },
    },
  ];
  const trace = parseTraceText(events.map((e) => JSON.stringify(e)).join("\n"), "t");
  if (!trace.ok) throw new Error("bad test trace");
  const replayer = createReplayer({
    inputs: { policy: policy.value, policyFile: "p" },
    sessions,
    trustedServers: new Set(["bank"]),
    now: NOW,
    approveAsks: true,
  });
  const calls = await replayer.replayTrace(trace.value);
  expect(calls.map((c) => c.route)).toEqual(["accept", "accept"]);
  return (made[0]?.provenance?.() ?? []).filter((e) => e.source.startsWith("bank.lookup")).map((e) => e.label);
}

describe("acp replay labels a trusted server's error as acp proxy does", () => {
  it("an answer of a --trusted-server is trusted, its error (isError) untrusted, live and replayed alike", async () => {
    const live = liveLabels();
    expect(live).toEqual(["system_policy", "external_untrusted"]);
    expect(await replayedLabels()).toEqual(live);
  });
});
