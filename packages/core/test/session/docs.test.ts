import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { INTENT_JSON_SCHEMA, PLAN_JSON_SCHEMA, SESSION_CODES } from "../../src/index.js";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const read = (path: string): string => readFileSync(`${root}${path}`, "utf8");

describe("docs and schemas stay in step with the session runtime", () => {
  it("lists every session code in docs/reference/errors.md § Session runtime, and nothing else", () => {
    const section = read("docs/reference/errors.md").split("## Session runtime")[1]?.split("\n## ")[0] ?? "";
    const documented = [...section.matchAll(/^\| `([a-z0-9_]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
    expect(documented).toEqual(SESSION_CODES.map((c) => [c.code, c.meaning]));
  });

  it("has no duplicate codes", () => {
    const codes = SESSION_CODES.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("bundles exactly spec/schemas/intent.schema.json and plan.schema.json", () => {
    expect(INTENT_JSON_SCHEMA).toEqual(JSON.parse(read("spec/schemas/intent.schema.json")));
    expect(PLAN_JSON_SCHEMA).toEqual(JSON.parse(read("spec/schemas/plan.schema.json")));
  });
});
