import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { GRAPH_ISSUE_CODES, GRAPH_REASON_CODES } from "../../src/index.js";

const dir = fileURLToPath(new URL("../../src/graph", import.meta.url));
// core does no I/O: reading the graph and review record files is the store's, and so are their codes
// `graph_unreadable` and `review_record_unreadable`
const storeReaders = ["graph-file.ts", "review-file.ts"].map((f) =>
  fileURLToPath(new URL(`../../../store/src/graph-review/${f}`, import.meta.url)),
);
const sources = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && f !== "codes.ts")
  .map((f) => readFileSync(join(dir, f), "utf8"))
  .concat(storeReaders.map((f) => readFileSync(f, "utf8")))
  .join("\n");

describe("graph code registry", () => {
  it("every registered code is emitted somewhere in the graph sources (or the store's graph and review file readers)", () => {
    const missing = [...GRAPH_REASON_CODES, ...GRAPH_ISSUE_CODES].filter(({ code }) => !sources.includes(`"${code}"`));
    expect(missing.map((c) => c.code)).toEqual([]);
  });

  it("codes are unique snake_case", () => {
    const codes = [...GRAPH_REASON_CODES, ...GRAPH_ISSUE_CODES].map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
  });
});
