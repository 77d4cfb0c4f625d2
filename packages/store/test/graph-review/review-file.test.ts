import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConsentGraph, type ConsentGraph } from "@acp/core";
import { graphReviewsPath, readGraphReviews, recordGraphReviewFile } from "../../src/graph-review/index.js";

const graphResult = parseConsentGraph(
  JSON.stringify({
    email: { autonomous: ["read"], requires_approval: ["send"], blocked: [] },
    cron: { autonomous: ["list"], requires_approval: [], blocked: [] },
  }),
);
const graph = (graphResult.ok ? graphResult.value : undefined) as ConsentGraph;
let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-review-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("review record file", () => {
  it("a missing file is an empty record", () => {
    const result = readGraphReviews(graphReviewsPath(home));
    expect(result.ok && Object.keys(result.value.domains)).toEqual([]);
  });

  it("records a review atomically with mode 0600 and reads it back", () => {
    const path = graphReviewsPath(join(home, "new-home"));
    const result = recordGraphReviewFile(path, graph, ["email"], new Date("2026-01-15T12:00:00Z"));
    expect(result.ok && result.value.domains).toEqual(["email"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(home, "new-home"))).toEqual(["consent-graph.reviews.json"]);
    const back = readGraphReviews(path);
    expect(back.ok && back.value.domains["email"]?.reviewed_at).toBe("2026-01-15T12:00:00.000Z");
  });

  it("a record that is there and cannot be read is review_record_unreadable, apart from a malformed one", () => {
    const path = graphReviewsPath(home);
    mkdirSync(path);
    const read = readGraphReviews(path);
    expect(read.ok === false && read.issues.map((i) => [i.code, i.message])).toEqual([
      ["review_record_unreadable", `cannot read review record \`${path}\`: not a file`],
    ]);
    expect(recordGraphReviewFile(path, graph, [], new Date()).ok).toBe(false);
    rmSync(path, { recursive: true });
    writeFileSync(path, "{ not json");
    const malformed = readGraphReviews(path);
    expect(malformed.ok === false && malformed.issues[0]?.code).toBe("json_syntax");
  });

  it("refuses to overwrite a malformed record, and writes nothing for an unknown domain", () => {
    const path = graphReviewsPath(home);
    writeFileSync(path, "{ not json");
    expect(recordGraphReviewFile(path, graph, [], new Date()).ok).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("{ not json");
    rmSync(path);
    expect(recordGraphReviewFile(path, graph, ["nope"], new Date()).ok).toBe(false);
    expect(readdirSync(home)).toEqual([]);
  });
});
