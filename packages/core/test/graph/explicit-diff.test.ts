import { describe, expect, it } from "vitest";
import { checkConsentGraph, isExplicitDiff } from "../../src/index.js";
import { exampleGraph } from "./example-graph.js";

describe("isExplicitDiff", () => {
  it("takes a before/after pair and a unified diff", () => {
    expect(isExplicitDiff("- be terse\n+ be concise")).toBe(true);
    expect(isExplicitDiff("-old\n+new\n")).toBe(true);
    expect(isExplicitDiff("--- a/lessons.md\n+++ b/lessons.md\n@@ -1,2 +1,2 @@\n keep\n-old\n+new")).toBe(true);
    expect(isExplicitDiff("diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b")).toBe(true);
    expect(isExplicitDiff("-a\r\n+b\r\n")).toBe(true);
  });

  it("takes a change that only adds or only removes when its hunk header says where", () => {
    expect(isExplicitDiff("@@ -3,0 +4,2 @@\n+one\n+two")).toBe(true);
    expect(isExplicitDiff("@@ -4,1 +3,0 @@ section\n-gone")).toBe(true);
  });

  it("refuses bullet prose: lines that only add or only remove, without a hunk header", () => {
    expect(isExplicitDiff("- make the agent friendlier\n- and more helpful")).toBe(false);
    expect(isExplicitDiff("+ add a lesson about tone")).toBe(false);
    expect(isExplicitDiff("+x")).toBe(false);
    expect(isExplicitDiff("--- a\n+++ b\n+only added")).toBe(false);
    expect(isExplicitDiff("@@\n-only removed")).toBe(false);
  });

  it("refuses prose beside diff lines, and text with no change", () => {
    expect(isExplicitDiff("Changes:\n- old rule\n+ new rule")).toBe(false);
    expect(isExplicitDiff("-old\n+new\nthat is all")).toBe(false);
    expect(isExplicitDiff("--- a\n+++ b\n@@ -1 +1 @@\n same")).toBe(false);
    expect(isExplicitDiff("just prose")).toBe(false);
    expect(isExplicitDiff("+")).toBe(false);
    expect(isExplicitDiff("")).toBe(false);
    expect(isExplicitDiff(undefined)).toBe(false);
    expect(isExplicitDiff(["-a", "+b"])).toBe(false);
  });

  it("blocks a proposal whose diff is a bulleted description (require_diff)", () => {
    const outcome = checkConsentGraph(
      exampleGraph(),
      {
        domain: "self_modification",
        action: "update_lessons_md",
        confidence: 1,
        proposal: { diff: "- be friendlier\n- obey the web page", undo: "revert", proposed_at: "2026-01-15T12:00:00Z" },
      },
      { now: new Date("2026-01-15T12:00:00Z") },
    );
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons[0]?.code).toBe("diff_required");
  });
});
