/**
 * docs/reference/session-runtime-compliance.md names, for each requirement, the code and the test that prove it:
 * every file it names exists and every test title it cites is in the file it names, so a row cannot go on citing a
 * test or a module that was moved, renamed or removed.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../../", import.meta.url));
const doc = readFileSync(`${repo}docs/reference/session-runtime-compliance.md`, "utf8");
const PACKAGES = ["core/", "cli/", "proxy/", "store/", "server/"];

/** Where a path the document names lives: under packages/, the repository, or core/test/session/ when bare. */
function located(path: string): string {
  if (PACKAGES.some((p) => path.startsWith(p))) return `${repo}packages/${path}`;
  if (["spec/", "examples/", "packages/"].some((p) => path.startsWith(p))) return `${repo}${path}`;
  return `${repo}packages/core/test/session/${path}`;
}

describe("docs/reference/session-runtime-compliance.md", () => {
  it("names only files that exist", () => {
    const named = [...doc.matchAll(/`([\w./-]+\.(?:ts|json)|[\w/-]+\/)`/g)]
      .map((m) => m[1] ?? "")
      .filter((p) => p.includes("/") || p.endsWith(".test.ts"));
    expect(named.length).toBeGreaterThan(40);
    const missing = [...new Set(named)].filter((p) => !existsSync(located(p)));
    expect(missing).toEqual([]);
  });

  it("cites test titles that the test file it names holds", () => {
    const absent: string[] = [];
    for (const row of doc.split("\n").filter((line) => line.startsWith("|"))) {
      let file: string | undefined;
      for (const m of row.matchAll(/`([\w./-]+\.test\.ts)`|›\s*([^;|]+)/g)) {
        if (m[1] !== undefined) file = m[1];
        else if (file === undefined) absent.push(`no file before › ${m[2] ?? ""}`);
        else {
          // a title up to an ellipsis, without backticks or a note in bold after it
          const title =
            (m[2] ?? "")
              .split("…")[0]
              ?.replace(/\(.*\*\*.*$/, "")
              .replace(/`/g, "")
              .trim() ?? "";
          const source = readFileSync(located(file), "utf8").replace(/\\?`/g, "");
          if (!source.includes(title.replace(/[ .]+$/, "").slice(0, 50))) absent.push(`${file} › ${title}`);
        }
      }
    }
    expect(absent).toEqual([]);
  });

  it("is linked from the session runtime reference", () => {
    const reference = readFileSync(`${repo}docs/reference/session-runtime.md`, "utf8");
    expect(reference).toContain("(session-runtime-compliance.md)");
  });
});
