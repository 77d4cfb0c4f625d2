import { describe, expect, it } from "vitest";
import { parsePolicy, type DecisionSource, type Policy } from "@acp/core";
import { createReplayer } from "../src/replay/driver.js";
import type { ReplaySession, ReplaySessionFactory } from "../src/replay/session-seam.js";
import { parseTraceText, type Trace } from "../src/replay/trace.js";

const NOW = new Date("2026-01-15T12:00:00Z");

function policy(text: string): Policy {
  const parsed = parsePolicy(text);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join("; "));
  return parsed.value;
}

const POLICY = policy(`
version: "1"
default_action: ask
rules:
  - { id: reads, match: { category: read }, action: allow }
  - { id: notes, match: { tool: write_note }, action: allow, rate_limit: "1/minute" }
  - { id: no-money, match: { category: financial }, action: deny }
`);

function trace(name: string, events: readonly object[]): Trace {
  const parsed = parseTraceText(events.map((e) => JSON.stringify(e)).join("\n"), name);
  if (!parsed.ok) throw new Error("bad test trace");
  return parsed.value;
}

interface Recorded {
  readonly log: string[];
  readonly factory: ReplaySessionFactory;
  readonly created: string[];
}

/** A session that records what the driver tells it, optionally with a source of its own. */
function recordingSessions(source?: (log: string[]) => DecisionSource): Recorded {
  const log: string[] = [];
  const created: string[] = [];
  const factory: ReplaySessionFactory = (name) => {
    created.push(name);
    const own: string[] = [];
    const session: ReplaySession = {
      sources: source === undefined ? [] : [source(own)],
      recordUserInput: (text) => void log.push(`${name} user ${text}`),
      recordToolResult: (server, tool, content, { trusted }) =>
        void log.push(
          `${name} result ${server}.${tool} ${JSON.stringify(content)} ${trusted ? "trusted" : "untrusted"}`,
        ),
      recordExecution: (request) => void log.push(`${name} executed ${request.server ?? ""}.${request.tool}`),
    };
    return session;
  };
  return { log, factory, created };
}

const call = (server: string, tool: string, args: object = {}): object => ({ type: "tool_call", server, tool, args });
const result = (server: string, tool: string, content: unknown, extra: object = {}): object => ({
  type: "tool_result",
  server,
  tool,
  content,
  ...extra,
});

describe("replay driver", () => {
  it("ignores the result of a call that was not accepted: it never executed", async () => {
    const rec = recordingSessions();
    const replayer = createReplayer({ inputs: { policy: POLICY, policyFile: "p" }, sessions: rec.factory, now: NOW });
    const calls = await replayer.replayTrace(
      trace("t", [
        { type: "user_input", text: "pay the bill" },
        call("bank", "transfer_funds", { to: "x" }),
        result("bank", "transfer_funds", "sent"),
        call("mail", "send_email"),
        result("mail", "send_email", "queued"),
        call("files", "read_file"),
        result("files", "read_file", "bill: 10"),
      ]),
    );
    expect(calls.map((c) => c.route)).toEqual(["refuse", "ask", "accept"]);
    expect(rec.log).toEqual([
      "t user pay the bill",
      "t executed files.read_file",
      't result files.read_file "bill: 10" untrusted',
    ]);
  });

  it("with approveAsks, an asked call executes and its result counts; a refused one still does not", async () => {
    const rec = recordingSessions();
    const replayer = createReplayer({
      inputs: { policy: POLICY, policyFile: "p" },
      sessions: rec.factory,
      now: NOW,
      approveAsks: true,
    });
    await replayer.replayTrace(
      trace("t", [
        call("mail", "send_email"),
        result("mail", "send_email", "queued"),
        call("bank", "pay_x"),
        result("bank", "pay_x", 1),
      ]),
    );
    expect(rec.log).toEqual(["t executed mail.send_email", 't result mail.send_email "queued" untrusted']);
  });

  it("takes provenance from server trust unless the event carries its own", async () => {
    const rec = recordingSessions();
    const replayer = createReplayer({
      inputs: { policy: POLICY, policyFile: "p" },
      sessions: rec.factory,
      trustedServers: new Set(["calendar"]),
      now: NOW,
    });
    await replayer.replayTrace(
      trace("t", [
        call("calendar", "read_events"),
        result("calendar", "read_events", "a"),
        call("calendar", "read_events"),
        result("calendar", "read_events", "b", { provenance: "external_untrusted" }),
        call("web", "get_page"),
        result("web", "get_page", "c"),
        call("web", "get_page"),
        result("web", "get_page", "d", { provenance: "system_policy" }),
      ]),
    );
    expect(rec.log.filter((l) => l.includes("result"))).toEqual([
      't result calendar.read_events "a" trusted',
      't result calendar.read_events "b" untrusted',
      't result web.get_page "c" untrusted',
      't result web.get_page "d" trusted',
    ]);
  });

  it("matches each result to the oldest open call of the same tool", async () => {
    const rec = recordingSessions();
    const replayer = createReplayer({ inputs: { policy: POLICY, policyFile: "p" }, sessions: rec.factory, now: NOW });
    await replayer.replayTrace(
      trace("t", [
        call("s", "read_a"),
        call("s", "send_b"),
        call("s", "read_a"),
        result("s", "send_b", "not executed"),
        result("s", "read_a", "first"),
        result("s", "read_a", "second"),
        result("s", "read_a", "no call: seen as is"),
      ]),
    );
    expect(rec.log.filter((l) => l.includes("result"))).toEqual([
      't result s.read_a "first" untrusted',
      't result s.read_a "second" untrusted',
      't result s.read_a "no call: seen as is" untrusted',
    ]);
  });

  it("gives every trace a fresh session and fresh rate limits", async () => {
    const rec = recordingSessions();
    const replayer = createReplayer({ inputs: { policy: POLICY, policyFile: "p" }, sessions: rec.factory, now: NOW });
    const one = trace("one", [call("n", "write_note"), call("n", "write_note")]);
    const two = trace("two", [call("n", "write_note")]);
    expect((await replayer.replayTrace(one)).map((c) => c.route)).toEqual(["accept", "refuse"]);
    expect((await replayer.replayTrace(two)).map((c) => c.route)).toEqual(["accept"]);
    expect(rec.created).toEqual(["one", "two"]);
  });

  it("adds the session's source to the pipeline: the strictest route wins", async () => {
    const rec = recordingSessions((): DecisionSource => ({
      name: "session",
      evaluate: (request) =>
        request.tool === "read_secret"
          ? { source: "session", route: "refuse", reasons: [{ source: "session", code: "test", message: "no" }] }
          : null,
    }));
    const replayer = createReplayer({ inputs: { policy: POLICY, policyFile: "p" }, sessions: rec.factory, now: NOW });
    const calls = await replayer.replayTrace(trace("t", [call("s", "read_secret"), call("s", "read_other")]));
    expect(calls.map((c) => c.route)).toEqual(["refuse", "accept"]);
    expect(calls[0]?.reasons.map((r) => r.source)).toContain("session");
  });

  it("refuses a call whose arguments the pipeline rejects, and replays on", async () => {
    const replayer = createReplayer({ inputs: { policy: POLICY, policyFile: "p" }, now: NOW });
    const calls = await replayer.replayTrace(trace("t", [call("s", "x".repeat(300)), call("s", "read_a")]));
    expect(calls.map((c) => [c.route, c.reasons[0]?.code])).toEqual([
      ["refuse", "request_too_large"],
      ["accept", "rule_matched"],
    ]);
  });
});
