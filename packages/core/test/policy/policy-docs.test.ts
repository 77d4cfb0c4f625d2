import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formatIssue, parsePolicy, POLICY_ISSUES } from "@acp/core";

const docs = (path: string): string =>
  readFileSync(fileURLToPath(new URL(`../../../../docs/${path}`, import.meta.url)), "utf8");

/** The fenced code blocks of a markdown page whose info string is `lang` (`""` for none). */
function blocks(markdown: string, lang: string): string[] {
  const found: string[] = [];
  let current: string[] | undefined;
  let currentLang = "";
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) {
      if (current === undefined) {
        current = [];
        currentLang = line.slice(3).trim();
      } else {
        if (currentLang === lang) found.push(current.join("\n"));
        current = undefined;
      }
    } else current?.push(line);
  }
  return found;
}

describe("docs/reference/policy.md", () => {
  const page = docs("reference/policy.md");

  it("opens with an example policy that is valid", () => {
    const result = parsePolicy(blocks(page, "yaml")[0] ?? "");
    expect(result.ok && result.value.rules.map((r) => r.id)).toEqual([
      "allow-reads",
      "mail-inside-office-hours",
      "other-mail",
      "no-money",
    ]);
  });

  it("shows exactly the problems `acp policy validate` reports for its invalid example", () => {
    const invalid = blocks(page, "yaml").find((block) => block.includes("alow")) ?? "";
    const result = parsePolicy(invalid);
    const shown = blocks(page, "").find((block) => block.startsWith("policy.yml:")) ?? "";
    expect(result.ok ? [] : result.issues.map((i) => formatIssue(i, "policy.yml"))).toEqual(shown.trim().split("\n"));
  });
});

describe("docs/reference/errors.md, section Policy (parse and validate)", () => {
  it("lists exactly the policy issue codes, with their meanings", () => {
    const page = docs("reference/errors.md");
    const section = page.split("## Policy (parse and validate)")[1]?.split("\n## ")[0] ?? "";
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (.*) \|$/gm)].map((m) => ({ code: m[1], meaning: m[2] }));
    expect(rows).toEqual(POLICY_ISSUES.map((issue) => ({ code: issue.code, meaning: issue.meaning })));
  });
});
