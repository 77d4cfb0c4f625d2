import { describe, expect, it } from "vitest";
import { formatIssue, lintConsentGraph } from "../../src/index.js";
import { EXAMPLE_GRAPH_TEXT, exampleGraph } from "./example-graph.js";

describe("lintConsentGraph", () => {
  it("the document's example graph is clean, as text, raw object or parsed graph", () => {
    expect(lintConsentGraph(EXAMPLE_GRAPH_TEXT)).toEqual([]);
    expect(lintConsentGraph(JSON.parse(EXAMPLE_GRAPH_TEXT))).toEqual([]);
    expect(lintConsentGraph(exampleGraph())).toEqual([]);
  });

  it("reports an action in more than one list at its second place", () => {
    const text = '{\n"email": {\n"autonomous": ["read", "send"],\n"requires_approval": ["send"],\n"blocked": []}}';
    const [issue] = lintConsentGraph(text);
    expect(issue).toMatchObject({ code: "action_in_several_tiers", line: 4, column: 23 });
    expect(formatIssue(issue!, "g.json")).toBe(
      "g.json:4:23: `email.send` is in both `autonomous` and `requires_approval` (the stricter tier applies) (keep it in exactly one list)",
    );
  });

  it("reports a duplicate within one list", () => {
    const issues = lintConsentGraph({ cron: { autonomous: ["list", "list"], requires_approval: [], blocked: [] } });
    expect(issues.map((i) => i.code)).toEqual(["duplicate_action"]);
  });

  it("reports a domain missing a list, naming the list", () => {
    const issues = lintConsentGraph('{"cron": {"autonomous": ["list"], "blocked": []}}');
    expect(issues).toEqual([
      expect.objectContaining({
        code: "missing_tier",
        line: 1,
        column: 2,
        message: "domain `cron` has no `requires_approval` list",
      }),
    ]);
  });

  it("reports an empty domain and an empty graph", () => {
    expect(
      lintConsentGraph({ cron: { autonomous: [], requires_approval: [], blocked: [] } }).map((i) => i.code),
    ).toEqual(["empty_domain"]);
    expect(lintConsentGraph("{}").map((i) => i.code)).toEqual(["empty_graph"]);
  });

  it("reports a trusted_channel_required action that is in no tier", () => {
    const raw = {
      self_modification: {
        autonomous: ["a"],
        requires_approval: [],
        blocked: [],
        trusted_channel_required: ["a", "b"],
      },
    };
    expect(lintConsentGraph(raw)).toEqual([
      expect.objectContaining({
        code: "trusted_channel_unclassified",
        path: ["self_modification", "trusted_channel_required", 1],
      }),
    ]);
  });

  it("allows trusted_channel_required and the proposal extras on any domain", () => {
    const raw = {
      email: {
        autonomous: [],
        requires_approval: ["send"],
        blocked: [],
        trusted_channel_required: ["send"],
        require_diff: true,
      },
    };
    expect(lintConsentGraph(raw)).toEqual([]);
  });

  it("includes validation issues such as unknown keys, in source order", () => {
    const text =
      '{"email": {"autonomous": [], "requires_approval": [], "blocked": [], "blokced": []},\n "x": {"autonomous": ["a", "a"], "requires_approval": [], "blocked": []}}';
    expect(lintConsentGraph(text).map((i) => [i.code, i.line])).toEqual([
      ["empty_domain", 1],
      ["unknown_key", 1],
      ["duplicate_action", 2],
    ]);
  });

  it("reports a syntax error alone and never throws", () => {
    expect(lintConsentGraph("{").map((i) => i.code)).toEqual(["json_syntax"]);
    expect(lintConsentGraph(null).map((i) => i.code)).toEqual(["invalid_type"]);
    expect(lintConsentGraph(7).length).toBeGreaterThan(0);
  });
});
