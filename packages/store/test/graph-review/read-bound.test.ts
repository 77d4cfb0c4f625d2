import type * as NodeFs from "node:fs";
import { mkdtempSync, rmSync, writeFileSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

// A file that grows between the size check and the read: `statSync` answers with the size the file had
// a moment before (small), as it would when another process appends after the check.
const stale = vi.hoisted(() => ({ size: undefined as number | undefined }));
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  const statSync = ((path: string, options?: object) => {
    const st = fs.statSync(path, options) as Stats | undefined;
    if (st === undefined || stale.size === undefined) return st;
    return Object.assign(Object.create(Object.getPrototypeOf(st) as object) as Stats, st, { size: stale.size });
  }) as typeof fs.statSync;
  return { ...fs, statSync, default: { ...fs, statSync } };
});

const { MAX_GRAPH_REVIEWS_BYTES, readConsentGraphText, readGraphReviews } =
  await import("../../src/graph-review/index.js");
const { MAX_GRAPH_LENGTH } = await import("@acp/core");

const dir = mkdtempSync(join(tmpdir(), "acp-graph-read-bound-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("graph and review files are read with the bound their size check uses", () => {
  it("a review record past the limit by the time it is read is refused, not read whole", () => {
    const path = join(dir, "graph-reviews.json");
    writeFileSync(path, `${" ".repeat(MAX_GRAPH_REVIEWS_BYTES)}{}`);
    stale.size = 2;
    try {
      const r = readGraphReviews(path);
      expect(r.ok ? "ok" : r.issues[0]?.code).toBe("invalid_review_record");
      expect(r.ok ? "" : r.issues[0]?.message).toContain(`is more than ${MAX_GRAPH_REVIEWS_BYTES} bytes`);
    } finally {
      stale.size = undefined;
    }
  });

  it("a consent graph past the limit by the time it is read is too large", () => {
    const path = join(dir, "consent-graph.json");
    writeFileSync(path, `${" ".repeat(MAX_GRAPH_LENGTH * 4)}{}`);
    stale.size = 2;
    try {
      const r = readConsentGraphText(path);
      expect(r.status).toBe("invalid");
      expect(r.status === "invalid" && r.issues.map((i) => i.code)).toEqual(["graph_too_large"]);
    } finally {
      stale.size = undefined;
    }
  });
});
