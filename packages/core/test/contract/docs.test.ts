import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_ROUTE_TABLE, checkToolPrecheck } from "../../src/contract/index.js";
import { DOC, repoRoot } from "./fixtures.js";

const page = readFileSync(`${repoRoot}docs/reference/action-contract.md`, "utf8");

describe("docs/reference/action-contract.md", () => {
  it("shows the envelope checkToolPrecheck really returns for the document's write example", () => {
    const block = /## The envelope[\s\S]*?```json\n([\s\S]*?)```/.exec(page)?.[1] ?? "";
    expect(JSON.parse(block)).toEqual(checkToolPrecheck(DOC.writeMissingConfirmation));
  });

  it("documents the route table the code uses", () => {
    const rows = [...page.matchAll(/^\| `(public_read|private_read|write|unknown)` \| (.*) \|$/gm)];
    const table: Record<string, string[]> = {};
    for (const m of rows) table[m[1] ?? ""] = (m[2] ?? "").split(" | ").map((cell) => cell.replace(/\*/g, "").trim());
    expect(table).toEqual(
      Object.fromEntries(Object.entries(CONTRACT_ROUTE_TABLE).map(([category, row]) => [category, Object.values(row)])),
    );
  });
});
