import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatIssue } from "@acp/core";
import { parseTraceEvent, parseTraceText, TRACE_LIMITS } from "../src/replay/trace.js";

function issuesOf(text: string): { code: string; line: number | undefined; text: string }[] {
  const parsed = parseTraceText(text, "t.jsonl");
  if (parsed.ok) throw new Error("expected the trace to be invalid");
  return parsed.issues.map((i) => ({ code: i.code, line: i.line, text: formatIssue(i, "t.jsonl") }));
}

describe("trace parser", () => {
  it("reads the three event types in order, skipping blank lines, a BOM and CRLF endings", () => {
    const text =
      '\uFEFF{"type":"user_input","text":"hi"}\r\n\n' +
      '{"type":"tool_call","server":"s","tool":"t","args":{"a":1}}\r\n' +
      '{"type":"tool_result","server":"s","tool":"t","content":["any",{"json":true}],"provenance":"user_input"}\n';
    const parsed = parseTraceText(text, "t.jsonl");
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.name).toBe("t.jsonl");
    expect(parsed.value.events).toEqual([
      { type: "user_input", text: "hi", line: 1 },
      { type: "tool_call", server: "s", tool: "t", args: { a: 1 }, line: 3 },
      {
        type: "tool_result",
        server: "s",
        tool: "t",
        content: ["any", { json: true }],
        provenance: "user_input",
        line: 4,
      },
    ]);
  });

  it("ignores unknown fields inside an event and gives a call without args empty arguments", () => {
    const parsed = parseTraceText('{"type":"tool_call","server":"s","tool":"t","role":"injection","x":{}}', "t");
    expect(parsed.ok && parsed.value.events[0]).toEqual({
      type: "tool_call",
      server: "s",
      tool: "t",
      args: {},
      line: 1,
    });
  });

  it("reports an unknown event type naming the file and line", () => {
    const issues = issuesOf('{"type":"user_input","text":"a"}\n{"type":"tool_cal","server":"s","tool":"t"}');
    expect(issues).toEqual([
      {
        code: "unknown_event_type",
        line: 2,
        text: "t.jsonl:2: unknown event type `tool_cal` (expected user_input, tool_call, tool_result)",
      },
    ]);
  });

  it("reports an event without a type", () => {
    expect(issuesOf('{"text":"a"}')[0]).toMatchObject({ code: "unknown_event_type", line: 1 });
  });

  it("reports a malformed JSON line with its line number", () => {
    const issues = issuesOf('{"type":"user_input","text":"a"}\n{"type": "tool_call",');
    expect(issues).toHaveLength(1);
    expect(issues[0]?.code).toBe("malformed_json");
    expect(issues[0]?.text).toMatch(/^t\.jsonl:2: malformed JSON: /);
  });

  it.each([
    ["a JSON value that is not an object", "[1,2]", "an event must be a JSON object"],
    ["a user input without text", '{"type":"user_input"}', "`user_input` event: `text` must be a string"],
    ["a call without a tool", '{"type":"tool_call","server":"s"}', "`tool_call` event without `tool`"],
    ["a call with an empty server", '{"type":"tool_call","server":"","tool":"t"}', "`server` must be a non-empty"],
    [
      "a call whose args are a list",
      '{"type":"tool_call","server":"s","tool":"t","args":[1]}',
      "`args` must be an object",
    ],
    ["a result without content", '{"type":"tool_result","server":"s","tool":"t"}', "without `content`"],
    [
      "a result with an unknown provenance",
      '{"type":"tool_result","server":"s","tool":"t","content":"x","provenance":"trusted"}',
      "unknown provenance `trusted` (expected system_policy, user_input, external_untrusted)",
    ],
  ])("reports %s as an invalid event", (_what, line, message) => {
    const issues = issuesOf(line);
    expect(issues[0]?.code).toBe("invalid_event");
    expect(issues[0]?.text).toContain(message);
    expect(issues[0]?.line).toBe(1);
  });

  it("reports every bad line, up to 20, then how many more", () => {
    const issues = issuesOf(Array.from({ length: 25 }, () => "{").join("\n"));
    expect(issues).toHaveLength(21);
    expect(issues[20]?.text).toBe("t.jsonl: 5 more problems not shown");
  });

  it("refuses a line longer than the limit without parsing it", () => {
    const long = `{"type":"user_input","text":"${"a".repeat(TRACE_LIMITS.maxLineChars)}"}`;
    expect(issuesOf(long)[0]).toMatchObject({ code: "trace_line_too_long", line: 1 });
  });

  it("refuses a trace with more events than the limit", () => {
    const line = '{"type":"user_input","text":""}\n';
    const issues = issuesOf(line.repeat(TRACE_LIMITS.maxEvents + 1));
    expect(issues).toEqual([
      {
        code: "too_many_events",
        line: TRACE_LIMITS.maxEvents + 1,
        text: `t.jsonl:${TRACE_LIMITS.maxEvents + 1}: the trace holds more than ${TRACE_LIMITS.maxEvents} events`,
      },
    ]);
  });

  it("never throws on arbitrary text, and every issue names a line or the whole file", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const parsed = parseTraceText(text, "t");
        if (!parsed.ok) for (const issue of parsed.issues) expect(issue.code).toMatch(/^[a-z_]+$/);
      }),
    );
  });

  it("never throws on arbitrary JSON values given as an event", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const parsed = parseTraceEvent(value, 7);
        if (!parsed.ok) expect(parsed.issues.every((i) => i.line === 7)).toBe(true);
      }),
    );
  });
});
