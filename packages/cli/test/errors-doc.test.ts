import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every `code: "snake_case"` literal in the packages' sources. */
function codesInSources(): Set<string> {
  const codes = new Set<string>();
  for (const pkg of readdirSync(join(root, "packages"))) {
    const src = join(root, "packages", pkg, "src");
    let files: string[] = [];
    try {
      files = sources(src);
    } catch {
      continue;
    }
    for (const file of files) {
      for (const match of readFileSync(file, "utf8").matchAll(/\bcode: "([a-z][a-z0-9_]*)"/g))
        codes.add(match[1] as string);
    }
  }
  return codes;
}

/** Every package source, concatenated: a documented code must appear in it as a string literal. */
function allSourceText(): string {
  return readdirSync(join(root, "packages"))
    .flatMap((pkg) => {
      try {
        return sources(join(root, "packages", pkg, "src"));
      } catch {
        return [];
      }
    })
    .map((file) => readFileSync(file, "utf8"))
    .join("\n");
}

function codesInDoc(): Set<string> {
  const doc = readFileSync(join(root, "docs/reference/errors.md"), "utf8");
  return new Set([...doc.matchAll(/^\| `([a-z][a-z0-9_]*)` \|/gm)].map((m) => m[1] as string));
}

describe("docs/reference/errors.md", () => {
  it("lists every error code the sources emit", () => {
    const documented = codesInDoc();
    const missing = [...codesInSources()].filter((code) => !documented.has(code)).sort();
    expect(missing).toEqual([]);
  });
  it("lists no code that the sources no longer contain", () => {
    const text = allSourceText();
    const stale = [...codesInDoc()].filter((code) => !text.includes(`"${code}"`)).sort();
    expect(stale).toEqual([]);
  });
});
