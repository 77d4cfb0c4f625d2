import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { AUDIT_EVENT_TYPES } from "@acp/core";

const AUDIT_MD = fileURLToPath(new URL("../../../docs/reference/audit.md", import.meta.url));

/** The text of audit.md's "Event types" section. */
function eventTypesSection(): string {
  const text = readFileSync(AUDIT_MD, "utf8");
  const start = text.indexOf("### Event types");
  const end = text.indexOf("\n## ", start);
  if (start < 0 || end < 0) throw new Error("docs/reference/audit.md has no `### Event types` section");
  return text.slice(start, end);
}

describe("docs/reference/audit.md lists the audit event types", () => {
  it("names every type of AUDIT_EVENT_TYPES (the verifier refuses any other)", () => {
    const section = eventTypesSection();
    const named = new Set([...section.matchAll(/`([a-z]+(?:_[a-z]+)+|checkpoint)`/g)].map((m) => m[1] as string));
    expect(AUDIT_EVENT_TYPES.filter((type) => !named.has(type))).toEqual([]);
  });
});
