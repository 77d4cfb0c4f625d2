import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { POSTGRES_STORE_ERROR_CODES } from "../../src/index.js";

const doc = readFileSync(new URL("../../../../docs/reference/errors.md", import.meta.url), "utf8");

describe("postgres store error codes", () => {
  it("are exactly the codes listed in the PostgreSQL store section of errors.md", () => {
    const section = doc.slice(doc.indexOf("\n## PostgreSQL store"));
    const next = section.indexOf("\n## ", 1);
    const rows = (next === -1 ? section : section.slice(0, next)).matchAll(/^\| `([a-z_]+)` \|/gm);
    expect([...rows].map((m) => m[1]).sort()).toEqual([...POSTGRES_STORE_ERROR_CODES].sort());
  });
});
