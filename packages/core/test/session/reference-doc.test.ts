import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileIntent, compilePlan, parseTransitionRules, SESSION_TRANSITIONS } from "../../src/index.js";
import { parse } from "yaml";

const doc = readFileSync(
  fileURLToPath(new URL("../../../../docs/reference/session-runtime.md", import.meta.url)),
  "utf8",
);
const blocks = (lang: string): string[] =>
  [...doc.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "");

describe("docs/reference/session-runtime.md", () => {
  it("shows an intent and a plan that validate, and the plan fits the intent", () => {
    const [intentText, planText] = blocks("json");
    const intent = compileIntent(JSON.parse(intentText ?? "null"));
    expect(intent.ok).toBe(true);
    if (!intent.ok) return;
    expect(compilePlan(JSON.parse(planText ?? "null"), intent.value).ok).toBe(true);
  });

  it("shows transition rules that parse", () => {
    const yaml = blocks("yaml").find((b) => b.startsWith("transitions:")) ?? "";
    const rules = parseTransitionRules(parse(yaml));
    expect(rules.ok && rules.value.map((r) => r.action)).toEqual(["deny", "ask", "ask"]);
  });

  it("lists every legal transition in its table", () => {
    const table = doc.split("Legal transitions:")[1]?.split("\n\n")[1] ?? "";
    for (const t of SESSION_TRANSITIONS) {
      const row = table
        .split("\n")
        .find(
          (line) =>
            line.includes(`| \`${t.operation}\` | \`${t.to}\``) &&
            (line.includes(`\`${t.from}\``) || line.startsWith("| every live state")),
        );
      expect(row, `${t.from} -${t.operation}-> ${t.to}`).toBeDefined();
    }
  });
});
