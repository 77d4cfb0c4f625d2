import { describe, expect, it } from "vitest";
import {
  BUILTIN_CLASSIFICATIONS,
  CATEGORY_DEFAULT_RISK,
  DEFAULT_CLASSIFICATION,
  classifyAction,
} from "../../src/classify/index.js";
import { CATEGORIES, RISK_LEVELS, type ActionRequest } from "../../src/request/index.js";
import type { ClassificationOverride } from "../../src/policy/types.js";

const req = (tool: string, extra: Partial<ActionRequest> = {}): ActionRequest => ({ tool, arguments: {}, ...extra });

describe("built-in classification (§5.5)", () => {
  it.each([
    ["read_file", "read", "low"],
    ["get_weather", "read", "low"],
    ["list_dir", "read", "low"],
    ["search_issues", "read", "low"],
    ["write_file", "write", "medium"],
    ["create_issue", "write", "medium"],
    ["update_row", "write", "medium"],
    ["send_email", "communication", "high"],
    ["email_team", "communication", "high"],
    ["message_user", "communication", "high"],
    ["delete_repo", "system", "high"],
    ["remove_user", "system", "high"],
    ["drop_table", "system", "high"],
    ["deploy_app", "system", "high"],
    ["exec", "system", "high"],
    ["execute_command", "system", "high"],
    ["shell_run", "system", "high"],
    ["transfer_funds", "financial", "critical"],
    ["pay_invoice", "financial", "critical"],
    ["charge_card", "financial", "critical"],
    ["publish_post", "public", "high"],
    ["post_status", "public", "high"],
    ["tweet_thread", "public", "high"],
  ])("classifies `%s` as %s/%s from the table", (tool, category, risk) => {
    expect(classifyAction(req(tool), [])).toEqual({ category, risk_level: risk, source: "builtin" });
  });

  it("classifies an unknown name conservatively as write/medium, never read", () => {
    const c = classifyAction(req("frobnicate"), []);
    expect(c).toEqual({ ...DEFAULT_CLASSIFICATION, source: "default" });
    expect(c.category).not.toBe("read");
  });

  it("needs the prefix at the start and is case-sensitive", () => {
    expect(classifyAction(req("reread_file"), []).source).toBe("default");
    expect(classifyAction(req("READ_file"), []).source).toBe("default");
    expect(classifyAction(req("read"), []).source).toBe("default");
  });

  it("lets another spelling of a name make it stricter, never looser", () => {
    // PascalCase, camelCase, kebab-case, upper case and namespaced names of consequential tools were
    // unknown (write/medium): the starter policy asked about `TransferFunds` instead of refusing it
    for (const [tool, category, risk] of [
      ["TransferFunds", "financial", "critical"],
      ["transferFunds", "financial", "critical"],
      ["transfer-funds", "financial", "critical"],
      ["PAY_INVOICE", "financial", "critical"],
      ["bank.transfer_funds", "financial", "critical"],
      ["bank/payInvoice", "financial", "critical"],
      ["bank__charge_card", "financial", "critical"],
      ["ExecuteCommand", "system", "high"],
      ["DeleteFile", "system", "high"],
      ["SendEmail", "communication", "high"],
      ["slack.send_message", "communication", "high"],
      ["postMessage", "public", "high"],
    ] as const) {
      expect([tool, classifyAction(req(tool), [])]).toEqual([tool, { category, risk_level: risk, source: "builtin" }]);
    }
    // a read-like spelling is not taken: it would loosen the default for an unknown name
    for (const tool of ["GetUser", "github.read_file", "READ_file", "listFiles"]) {
      expect([tool, classifyAction(req(tool), []).source]).toEqual([tool, "default"]);
    }
    // the name as written decides when it is in the table (as snake case does: `read_then_delete_all`)
    expect(classifyAction(req("read_then_DeleteAll"), []).category).toBe("read");
  });

  it("exports the table as data with every category valid and prefixes unique", () => {
    const prefixes = BUILTIN_CLASSIFICATIONS.flatMap((r) => r.prefixes);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    expect(prefixes).toHaveLength(22);
    for (const row of BUILTIN_CLASSIFICATIONS) expect(CATEGORIES).toContain(row.category);
  });
});

describe("classification precedence", () => {
  const overrides: ClassificationOverride[] = [
    { tool: "send_*", server: "internal-*", category: "write", risk_level: "low" },
    { tool: "frob*", category: "financial" },
    { tool: "read_*", risk_level: "high" },
  ];

  it("lets explicit request fields win over everything", () => {
    const c = classifyAction(
      req("send_email", { server: "internal-mail", category: "public", risk_level: "critical" }),
      overrides,
    );
    expect(c).toEqual({ category: "public", risk_level: "critical", source: "explicit" });
  });

  it("applies the first matching policy override, honouring its server glob", () => {
    expect(classifyAction(req("send_email", { server: "internal-mail" }), overrides)).toEqual({
      category: "write",
      risk_level: "low",
      source: "policy",
    });
    expect(classifyAction(req("send_email", { server: "gmail" }), overrides).source).toBe("builtin");
    expect(classifyAction(req("send_email"), overrides).source).toBe("builtin");
  });

  it("implies the category's default risk when an override names only the category", () => {
    expect(classifyAction(req("frobnicate"), overrides)).toEqual({
      category: "financial",
      risk_level: CATEGORY_DEFAULT_RISK.financial,
      source: "policy",
    });
  });

  it("keeps the lower layer's category when an override names only the risk", () => {
    expect(classifyAction(req("read_file"), overrides)).toEqual({
      category: "read",
      risk_level: "high",
      source: "policy",
    });
  });

  it("uses an explicit risk with the table's category", () => {
    expect(classifyAction(req("send_email", { risk_level: "low" }), [])).toEqual({
      category: "communication",
      risk_level: "low",
      source: "explicit",
    });
  });

  it("uses annotations for a name the table does not know", () => {
    expect(classifyAction(req("frobnicate", { annotations: { readOnlyHint: true } }), [])).toEqual({
      category: "read",
      risk_level: "low",
      source: "annotations",
    });
    expect(classifyAction(req("zap", { annotations: { destructiveHint: true } }), [])).toEqual({
      category: "write",
      risk_level: "high",
      source: "annotations",
    });
    expect(classifyAction(req("zap", { annotations: { readOnlyHint: false, destructiveHint: false } }), [])).toEqual({
      category: "write",
      risk_level: "medium",
      source: "annotations",
    });
  });

  it("never lets annotations loosen the built-in table", () => {
    const c = classifyAction(req("send_email", { annotations: { readOnlyHint: true } }), []);
    expect(c).toEqual({ category: "communication", risk_level: "high", source: "builtin" });
  });

  it("lets annotations tighten the built-in table", () => {
    const c = classifyAction(req("read_file", { annotations: { destructiveHint: true } }), []);
    expect(c).toEqual({ category: "write", risk_level: "high", source: "annotations" });
    // server-filesystem's write_file: a write that overwrites, so a write of high risk
    const w = classifyAction(req("write_file", { annotations: { readOnlyHint: false, destructiveHint: true } }), []);
    expect(w).toEqual({ category: "write", risk_level: "high", source: "annotations" });
  });

  it("keeps a table row's category whatever the annotations say (a shell marked destructive stays system)", () => {
    for (const tool of ["exec_command", "deploy_site", "drop_table", "transfer_funds", "send_email"]) {
      const plain = classifyAction(req(tool), []);
      for (const annotations of [
        { destructiveHint: true },
        { readOnlyHint: true },
        { readOnlyHint: false, destructiveHint: false },
      ]) {
        const c = classifyAction(req(tool, { annotations }), []);
        expect(c.category).toBe(plain.category);
        expect(RISK_LEVELS.indexOf(c.risk_level)).toBeGreaterThanOrEqual(RISK_LEVELS.indexOf(plain.risk_level));
      }
    }
  });

  it("ignores annotations that say nothing explicit", () => {
    expect(classifyAction(req("zap", { annotations: { idempotentHint: true } }), []).source).toBe("default");
  });

  it("puts policy overrides above annotations", () => {
    const c = classifyAction(req("frobnicate", { annotations: { readOnlyHint: true } }), overrides);
    expect(c.source).toBe("policy");
    expect(c.category).toBe("financial");
  });

  it("throws on an unknown explicit category instead of guessing", () => {
    const bad = { tool: "x", arguments: {}, category: "nope" } as unknown as ActionRequest;
    expect(() => classifyAction(bad, [])).toThrow(/unknown category `nope`/);
  });

  it("throws on an override with an invalid glob", () => {
    expect(() => classifyAction(req("x"), [{ tool: "[abc", category: "read" }])).toThrow(/classify override/);
  });
});
