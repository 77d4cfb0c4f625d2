import { describe, expect, it } from "vitest";
import {
  formatIssue,
  parseConsentGraph,
  assertConsentGraph,
  validateConsentGraph,
  ValidationError,
} from "../../src/index.js";
import { EXAMPLE_GRAPH_TEXT, exampleGraph } from "./example-graph.js";

function issuesOf(text: string) {
  const result = parseConsentGraph(text);
  if (result.ok) throw new Error("expected issues");
  return result.issues;
}

describe("parseConsentGraph", () => {
  it("loads the document's example graph unchanged, with every domain, vip contacts and decay", () => {
    const graph = exampleGraph();
    expect(Object.keys(graph.domains)).toEqual([
      "email",
      "imessage",
      "home_automation",
      "files",
      "external_api",
      "cron",
      "notifications",
      "calendar",
      "nodes",
      "self_modification",
    ]);
    expect(graph.domains["imessage"]?.trust_level).toBe("low");
    expect(graph.domains["self_modification"]).toMatchObject({
      cooling_period_hours: 2,
      undo_window_days: 7,
      require_diff: true,
      trusted_channel_required: ["propose_behavioral_change", "consolidate_daily_to_memory", "prune_stale_memory"],
    });
    expect(graph.vip_contacts["darcy"]).toBe("+1XXXXXXXXXX");
    expect(graph.consent_decay).toEqual({
      enabled: true,
      review_interval_days: 30,
      decay_action: "downgrade_to_requires_approval",
    });
    expect(JSON.parse(EXAMPLE_GRAPH_TEXT)).toHaveProperty("cron.blocked", []);
  });

  it("returns a deeply frozen graph", () => {
    const graph = exampleGraph();
    expect(Object.isFrozen(graph)).toBe(true);
    expect(Object.isFrozen(graph.domains)).toBe(true);
    expect(Object.isFrozen(graph.domains["email"]?.autonomous)).toBe(true);
    expect(() => (graph.domains["email"]?.autonomous as string[]).push("send")).toThrow();
  });

  it("reports a JSON syntax error with line and column", () => {
    const [issue] = issuesOf('{\n  "email": {\n    "autonomous": ["read",]\n  }\n}');
    expect(issue).toMatchObject({ code: "json_syntax", line: 3, column: 27 });
    expect(formatIssue(issue!, "g.json")).toMatch(/^g\.json:3:27: unexpected character `]`/);
  });

  it("reports an unknown key with a suggestion at the key's place", () => {
    const [issue] = issuesOf('{"email": {\n "autonomus": ["read"]}}');
    expect(issue).toMatchObject({ code: "unknown_key", line: 2, column: 2, help: "did you mean `autonomous`" });
  });

  it("suggests the reserved name for a misspelt top-level key", () => {
    const issues = issuesOf('{"vip_contact": {"darcy": "+1"}}');
    expect(issues).toEqual([expect.objectContaining({ code: "unknown_key", help: "did you mean `vip_contacts`" })]);
  });

  it("reports wrong types and values", () => {
    const codes = issuesOf(
      JSON.stringify({
        email: { autonomous: "read", trust_level: "hgh", require_diff: "yes", cooling_period_hours: -1 },
        files: ["read"],
        vip_contacts: { darcy: 5 },
        consent_decay: { enabled: "true", review_interval_days: 0, decay_action: "delete" },
      }),
    ).map((i) => i.code);
    expect(codes).toEqual([
      "invalid_value",
      "invalid_type",
      "invalid_value",
      "invalid_type",
      "invalid_type",
      "invalid_type",
      "invalid_type",
      "invalid_value",
      "invalid_value",
    ]);
  });

  it("refuses duplicate keys instead of keeping the last", () => {
    const [issue] = issuesOf('{"email": {"blocked": ["send"], "blocked": []}}');
    expect(issue).toMatchObject({ code: "duplicate_key", line: 1, column: 33 });
  });

  it("refuses an absurdly large graph without reading it", () => {
    const [issue] = issuesOf(" ".repeat(5 * 1024 * 1024 + 1));
    expect(issue?.code).toBe("graph_too_large");
  });

  it("refuses a list of more than 10,000 actions at the first action past the limit, reading no further", () => {
    const list = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `a${i}`)).replaceAll(",", ",\n");
    expect(parseConsentGraph(`{"email": {"autonomous": ${list(10_000)}}}`).ok).toBe(true);
    const issues = issuesOf(`{"email": {"autonomous": ${list(10_001)}, "blocked": ${list(20_000)}}}`);
    // one issue, placed at action 10,001 (line 10,001 of the text), not one per over-long list
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: "graph_too_large", path: ["email", "autonomous"], line: 10_001 });
    expect(issues[0]?.message).toContain("limit 10000");
    // a list anywhere else (no array of that length is valid in a graph) is refused the same way
    const [contacts] = issuesOf(`{"vip_contacts": {"x": ${list(10_001)}}}`);
    expect(contacts).toMatchObject({ code: "graph_too_large", path: ["vip_contacts", "x"] });
  });

  it("refuses 10,000-deep nesting without overflowing the stack", () => {
    const [issue] = issuesOf(`{"email": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`);
    expect(issue?.code).toBe("graph_too_deep");
  });

  it("treats `__proto__` and `constructor` as plain names", () => {
    expect(issuesOf('{"__proto__": {"autonomous": ["read"]}}')[0]?.code).toBe("invalid_name");
    const result = parseConsentGraph('{"constructor": {"autonomous": ["read"]}, "vip_contacts": {"__proto__": "+1"}}');
    expect(result.ok && Object.keys(result.value.domains)).toEqual(["constructor"]);
    expect(result.ok && Object.keys(result.value.vip_contacts)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("validateConsentGraph never throws, even for a raw object whose reading throws or that refers to itself", () => {
    const hostile = {
      email: {
        get autonomous(): string[] {
          throw new Error("boom");
        },
      },
    };
    const thrown = validateConsentGraph(hostile);
    expect(thrown.ok ? [] : thrown.issues.map((i) => i.code)).toEqual(["graph_error"]);
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const proxied = validateConsentGraph({ email: revoked.proxy });
    expect(proxied.ok ? [] : proxied.issues.map((i) => i.code)).toEqual(["graph_error"]);
    const cyclic: Record<string, unknown> = { autonomous: ["read"] };
    cyclic["self"] = cyclic;
    const loop = validateConsentGraph({ email: cyclic });
    expect(loop.ok ? [] : loop.issues.map((i) => i.code)).toEqual(["unknown_key"]);
  });

  it("refuses a non-object document and non-JSON input", () => {
    expect(issuesOf("[]")[0]?.code).toBe("invalid_type");
    expect(issuesOf("")[0]?.code).toBe("json_syntax");
    expect(issuesOf("{} x")[0]?.code).toBe("json_syntax");
    expect(parseConsentGraph(42 as unknown as string).ok).toBe(false);
  });

  it("accepts a missing tier list as empty (lint reports it)", () => {
    const result = parseConsentGraph('{"cron": {"autonomous": ["list"]}}');
    expect(result.ok && result.value.domains["cron"]).toMatchObject({ requires_approval: [], blocked: [] });
  });

  it("assertConsentGraph throws a ValidationError with the issues", () => {
    expect(() => assertConsentGraph("{", { file: "g.json" })).toThrow(ValidationError);
  });
});
