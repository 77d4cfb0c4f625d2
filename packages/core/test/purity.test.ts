import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const srcDir = fileURLToPath(new URL("../src", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const FORBIDDEN = [
  /from "@acp\//,
  /from "node:(fs|net|http|https|child_process|dgram|tls|dns|worker_threads|timers)/,
  /\bsetTimeout\(|\bsetInterval\(/,
  /\bDate\.now\(|new Date\(\)/,
  /process\.env/,
];

describe("core purity", () => {
  it("imports no sibling package and does no I/O, timers or ambient clock reads", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(srcDir)) {
      const text = readFileSync(file, "utf8");
      for (const pattern of FORBIDDEN) if (pattern.test(text)) offenders.push(`${file}: ${pattern.source}`);
    }
    expect(offenders).toEqual([]);
  });
});
