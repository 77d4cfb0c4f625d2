/**
 * An ask or deny rule's argument key meets the keys a server may read as it: in another case (`Path`,
 * `PATH`), full width or with a look-alike letter (`ｐａｔｈ`, `pаth` with a Cyrillic `а`), and written with
 * other separators (`filePath`, `file-path` for `file_path`). Each slipped past a deny rule before. An allow
 * rule never matches more for it: its key as written must be there, and every such key must match too.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest, matchArg, type CompiledArgMatch } from "../../src/evaluate/arg-match.js";
import { WorkBudgetExceededError, withWorkBudget } from "../../src/glob/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleOn(key: string, pattern: string, action: "deny" | "ask" | "allow" = "deny") {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { ${JSON.stringify(key)}: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (args: Record<string, unknown>): boolean =>
    matchPolicy(compiled, { tool: "read_file", arguments: args }, NOW).ruleId === "r";
}

describe("a deny or ask rule's argument key meets the keys a server may read as it", () => {
  it("meets a key in another case, full width or with a look-alike letter", () => {
    const denies = ruleOn("path", "/home/alice/.ssh/**");
    for (const key of ["path", "Path", "PATH", "ｐａｔｈ", "p\u0430th", "PАTH"]) {
      expect([key, denies({ [key]: "/home/alice/.ssh/id_rsa" })]).toEqual([key, true]);
    }
    expect(denies({ Path: "/home/alice/notes.txt" })).toBe(false);
    expect(denies({ paths: "/home/alice/.ssh/id_rsa" })).toBe(false);
  });

  it("meets a key written with other separators, and each part of a dotted path", () => {
    const asks = ruleOn("options.file_path", "/etc/**", "ask");
    for (const args of [
      { options: { file_path: "/etc/passwd" } },
      { Options: { filePath: "/etc/passwd" } },
      { OPTIONS: { "file-path": "/etc/passwd" } },
      { options: { FILE_PATH: "/etc/passwd" } },
    ]) {
      expect([args, asks(args)]).toEqual([args, true]);
    }
  });

  it("meets the one bad value among keys that read the same", () => {
    const denies = ruleOn("path", "/etc/**");
    expect(denies({ path: "/tmp/x", PATH: "/etc/passwd" })).toBe(true);
    expect(denies({ path: "/tmp/x", Path: "/tmp/y" })).toBe(false);
  });

  it("never lets an allow rule match more: its key as written, and every key read as it, must match", () => {
    const allows = ruleOn("path", "/tmp/**", "allow");
    expect(allows({ path: "/tmp/x" })).toBe(true);
    expect(allows({ Path: "/tmp/x" })).toBe(false);
    expect(allows({ path: "/tmp/x", PATH: "/etc/passwd" })).toBe(false);
    expect(allows({ path: "/tmp/x", filePath: "/etc/passwd", Path: "/tmp/y" })).toBe(true);
    expect(allows({ path: "/tmp/x", Path: "/tmp/y" })).toBe(true);
  });
});

describe("the keys a deny rule reads count against the decision's work budget", () => {
  it("charges indexing an object's keys by fold, once a decision", () => {
    const test = compileLeafTest("/etc/**", true);
    if (typeof test === "string") throw new Error(test);
    const arg: CompiledArgMatch = { key: "path", path: ["path"], test };
    const args: Record<string, unknown> = { path: "/tmp/x" };
    for (let i = 0; i < 2000; i++) args[`k${i}`] = "x";
    const fits = (units: number): boolean => {
      try {
        // twenty rules read the same object: its keys are indexed (and charged) once
        return withWorkBudget(units, () =>
          Array.from({ length: 20 }, () => matchArg(args, arg, false)).every((m) => !m),
        );
      } catch (err) {
        if (err instanceof WorkBudgetExceededError) return false;
        throw err;
      }
    };
    expect([fits(2000), fits(8000)]).toEqual([false, true]);
  });
});
