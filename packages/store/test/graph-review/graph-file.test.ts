import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consentGraphFileExists, loadConsentGraphFile, readConsentGraphText } from "../../src/graph-review/index.js";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-graph-file-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("consent graph file", () => {
  it("tells a file that cannot be read (a directory) from one that does not validate", () => {
    const path = join(dir, "consent-graph.json");
    mkdirSync(path);
    for (const file of [readConsentGraphText(path), loadConsentGraphFile(path)]) {
      expect(file).toEqual({
        status: "unreadable",
        path,
        reason: "not a file",
        issue: { code: "graph_unreadable", path: [], message: `cannot read consent graph \`${path}\`: not a file` },
      });
    }
  });

  it("a file that is there and does not parse stays invalid", () => {
    const path = join(dir, "consent-graph.json");
    writeFileSync(path, "{");
    const file = loadConsentGraphFile(path);
    expect(file.status).toBe("invalid");
    expect(file.status === "invalid" && file.issues.map((i) => i.code)).toEqual(["json_syntax"]);
  });

  it("a file that is not there is missing", () => {
    const path = join(dir, "nope.json");
    expect(loadConsentGraphFile(path)).toEqual({ status: "missing", path });
    expect(consentGraphFileExists(path)).toBe(false);
  });

  it("a symbolic link to a file that is not there is unreadable, not missing (the graph is not silently off)", () => {
    const path = join(dir, "consent-graph.json");
    symlinkSync(join(dir, "unmounted", "consent-graph.json"), path);
    expect(consentGraphFileExists(path)).toBe(true);
    for (const file of [readConsentGraphText(path), loadConsentGraphFile(path)]) {
      expect(file).toMatchObject({ status: "unreadable", path, reason: "a symbolic link to a file that is not there" });
      expect(file.status === "unreadable" && file.issue.code).toBe("graph_unreadable");
    }
  });
});
