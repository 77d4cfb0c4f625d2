import { describe, expect, it } from "vitest";
import { compileGlob, MAX_GLOB_NESTING, parsePolicy, requiredGlobText } from "../../src/index.js";
import { groupDepth } from "../../src/glob/group-depth.js";

const nested = (open: string, depth: number): string => `${open.repeat(depth)}a${")".repeat(depth)}`;

describe("a glob whose groups nest deeper than MAX_GLOB_NESTING is refused before it is compiled", () => {
  it("refuses an extglob 300 deep (half a second to compile before) with a clear message", () => {
    const pattern = nested("*(", 300);
    const result = compileGlob(pattern);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.message).toMatch(/nest deeper than 8 levels$/);
    expect(compileGlob(pattern, { starCrossesSlash: true }).ok).toBe(false);
    expect(requiredGlobText(pattern)).toBe("");
  });

  it("accepts groups nested to the limit, and matches as before", () => {
    const braces = (depth: number): string => `${"{x,".repeat(depth)}y${"}".repeat(depth)}`;
    const atLimit = compileGlob(braces(MAX_GLOB_NESTING));
    expect(atLimit.ok && [atLimit.value("x"), atLimit.value("y"), atLimit.value("z")]).toEqual([true, true, false]);
    expect(compileGlob(braces(MAX_GLOB_NESTING + 1)).ok).toBe(false);
    const ext = compileGlob(`/srv/@(logs|+(tmp|cache))/**`);
    expect(ext.ok && [ext.value("/srv/logs/x"), ext.value("/srv/tmptmp/x"), ext.value("/srv/etc/x")]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("counts neither escaped parentheses nor those inside a class", () => {
    expect(groupDepth("\\(".repeat(20))).toBe(0);
    expect(groupDepth(`[${"(".repeat(20)}]x`)).toBe(0);
    expect(groupDepth(`[](]${"(".repeat(3)}`)).toBe(3);
    expect(groupDepth("{a,b}".repeat(50))).toBe(1);
    expect(compileGlob(`*eval${"\\(".repeat(20)}*`).ok).toBe(true);
  });

  it("makes a policy holding such a pattern invalid, at the pattern's place", () => {
    const text = `version: "1"\nrules:\n  - { action: deny, match: { args: { v: "${nested("*(", 300)}" } } }\n`;
    const result = parsePolicy(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => [i.code, i.line])).toEqual([["invalid_glob", 3]]);
  });
});
