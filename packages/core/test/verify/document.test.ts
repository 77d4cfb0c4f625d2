import { describe, expect, it } from "vitest";
import { parsePositionedDocument, positionIssues } from "../../src/index.js";

describe("parsePositionedDocument", () => {
  it("names the line and column of a syntax error", () => {
    const parsed = parsePositionedDocument("goal: x\nallowed_actions:\n  - [unclosed\n", "intent");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues[0]).toMatchObject({ code: "verify_malformed_document", line: expect.any(Number) as number });
    expect(parsed.issues[0]?.column).toBeGreaterThan(0);
  });

  it("finds where a path is in the text, falling back to the nearest ancestor", () => {
    const parsed = parsePositionedDocument('{\n  "goal": "g",\n  "allowed_actions": ["a.b", "c.d"]\n}\n', "intent");
    if (!parsed.ok) throw new Error("should parse");
    expect(parsed.value.locate(["allowed_actions", 1])).toEqual({ line: 3, column: 30 });
    const [issue] = positionIssues([{ code: "x", path: ["goal", "deeper"], message: "m" }], parsed.value);
    expect(issue).toMatchObject({ line: 2, column: 11 });
  });
});
