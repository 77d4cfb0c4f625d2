import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_HARD_BLOCKERS, CONTRACT_INFO_REASONS, CONTRACT_ISSUE_CODES } from "../../src/contract/index.js";
import { repoRoot } from "./fixtures.js";

function documentedCodes(): string[] {
  const page = readFileSync(`${repoRoot}docs/reference/errors.md`, "utf8");
  const section = page.split("## Action contract")[1]?.split("\n## ")[0] ?? "";
  return [...section.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1] ?? "");
}

describe("docs/reference/errors.md, Action contract section", () => {
  it("lists every code the contract emits, and nothing else", () => {
    const emitted = new Set<string>([...CONTRACT_ISSUE_CODES, ...CONTRACT_HARD_BLOCKERS, ...CONTRACT_INFO_REASONS]);
    expect(new Set(documentedCodes())).toEqual(emitted);
  });
});
