import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRuleGlob } from "../../src/evaluate/fast-glob.js";
import { LiteralSearch, SEARCH_ONCE_LENGTH } from "../../src/evaluate/literal-search.js";
import { compileGlob, requiredGlobText } from "../../src/glob/index.js";

const chars = fc.constantFrom("a", "b", "_", "-", ".", "@", "/", "*", "1", "?", "[", "]", "!", "(", ")", "+");
const text = (max: number) => fc.array(chars, { maxLength: max }).map((cs) => cs.join(""));

describe("compileRuleGlob", () => {
  it("gives exactly compileGlob's answer, fast paths included", () => {
    const segment = fc.array(fc.constantFrom("a", "b", "_", "-", ".", "@", "1"), { minLength: 1, maxLength: 3 });
    const dir = fc
      .array(
        segment.map((cs) => cs.join("")),
        { minLength: 1, maxLength: 3 },
      )
      .map((ss) => ss.join("/"));
    const shaped = fc.oneof(
      text(6),
      text(5).map((s) => `${s}*`),
      text(5).map((s) => `*${s}`),
      text(4).map((s) => `*${s}*`),
      dir.map((d) => `${d}/**`),
      dir.map((d) => `/${d}/**`),
    );
    const pathish = fc
      .array(fc.constantFrom("a", "b", "_", ".", "..", "@", "1", "/", "a/b", "./", "/..", "a.", "\n", "\u2028"), {
        maxLength: 8,
      })
      .map((cs) => cs.join(""));
    fc.assert(
      fc.property(shaped, fc.array(fc.oneof(text(8), pathish), { minLength: 1, maxLength: 10 }), (pattern, values) => {
        const fast = compileRuleGlob(pattern);
        const slow = compileGlob(pattern);
        expect(fast.ok).toBe(slow.ok);
        if (!fast.ok || !slow.ok) return;
        for (const v of values) expect(fast.value(v)).toBe(slow.value(v));
      }),
      { numRuns: 3000 },
    );
  });

  it("gives exactly compileGlob's answer when it first searches for a literal run every match holds", () => {
    const piece = fc.constantFrom("abc", "a b", "x-y_z", "BEGIN", "*", "**", "?", "/", ".", "a", "!", "{a,b}", "[ab]");
    const pattern = fc.array(piece, { minLength: 1, maxLength: 6 }).map((ps) => ps.join(""));
    const value = fc
      .array(fc.constantFrom("abc", "a b", "x-y_z", "BEGIN", "BEGI", "ab", "/", ".", "a", "b", "\n"), { maxLength: 8 })
      .map((cs) => cs.join(""));
    fc.assert(
      fc.property(pattern, fc.array(value, { minLength: 1, maxLength: 8 }), fc.boolean(), (p, values, cross) => {
        const fast = compileRuleGlob(p, { starCrossesSlash: cross });
        const slow = compileGlob(p, { starCrossesSlash: cross });
        expect(fast.ok).toBe(slow.ok);
        if (!fast.ok || !slow.ok) return;
        for (const v of values) expect([p, v, fast.value(v)]).toEqual([p, v, slow.value(v)]);
      }),
      { numRuns: 3000 },
    );
  });

  it("gives exactly compileGlob's answer on long values, the literals of many globs searched for in one pass", () => {
    const piece = fc.constantFrom("abc", "a b", "BEGIN", "eval\\(", "*", "**", "?", "/", ".", "a", "{ab,cd}", "[ab]");
    const pattern = fc.array(piece, { minLength: 1, maxLength: 5 }).map((ps) => ps.join(""));
    const word = fc.constantFrom("abc", "a b", "BEGIN", "BEGI", "eval(", "eval", "ab", "cd", "/", ".", "a", "\n", "é");
    const value = fc
      .tuple(fc.array(word, { maxLength: 6 }), fc.array(word, { maxLength: 6 }), fc.constantFrom("x", "b", "/"))
      .map(([head, tail, fill]) => head.join("") + fill.repeat(SEARCH_ONCE_LENGTH) + tail.join(""));
    fc.assert(
      fc.property(
        fc.array(pattern, { minLength: 1, maxLength: 4 }),
        fc.array(value, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (patterns, values, cross) => {
          const search = new LiteralSearch();
          const compiled = patterns.map((p) => [p, compileRuleGlob(p, { starCrossesSlash: cross }, search)] as const);
          for (const [p, fast] of compiled) {
            const slow = compileGlob(p, { starCrossesSlash: cross });
            expect(fast.ok).toBe(slow.ok);
            if (!fast.ok || !slow.ok) continue;
            for (const v of values) expect([p, v, fast.value(v)]).toEqual([p, v, slow.value(v)]);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("reads the literal text every match holds from the glob's expression, escapes included", () => {
    expect(requiredGlobText("*BEGIN*PRIVATE KEY*")).toBe("PRIVATE KEY");
    expect(requiredGlobText("*eval\\(*")).toBe("eval(");
    expect(requiredGlobText("**/secrets")).toBe("secrets");
    expect(requiredGlobText("{abc,abd}*")).toBe("");
    expect(requiredGlobText("*a*b")).toBe("a");
    expect(requiredGlobText("delete_file")).toBe("delete_file");
  });

  it("gives exactly compileGlob's answer when a star crosses slashes, fast paths included", () => {
    const words = fc.array(fc.constantFrom("a", "b", " ", "-", "ab", "@"), { minLength: 1, maxLength: 3 });
    const shaped = fc.oneof(
      text(6),
      text(5).map((s) => `${s}*`),
      text(5).map((s) => `*${s}`),
      text(4).map((s) => `*${s}*`),
      fc.array(words, { minLength: 2, maxLength: 4 }).map((ws) => `*${ws.map((w) => w.join("")).join("*")}*`),
    );
    const value = fc
      .array(fc.constantFrom("a", "b", "_", ".", "..", "/", "\n", "@", "1", "*", "./", "/..", " ", "-"), {
        maxLength: 8,
      })
      .map((cs) => cs.join(""));
    fc.assert(
      fc.property(shaped, fc.array(value, { minLength: 1, maxLength: 10 }), (pattern, values) => {
        const fast = compileRuleGlob(pattern, { starCrossesSlash: true });
        const slow = compileGlob(pattern, { starCrossesSlash: true });
        expect(fast.ok).toBe(slow.ok);
        if (!fast.ok || !slow.ok) return;
        for (const v of values) expect([pattern, v, fast.value(v)]).toEqual([pattern, v, slow.value(v)]);
      }),
      { numRuns: 3000 },
    );
  });

  it("takes the fast path for the common shapes and still refuses slashes", () => {
    const tree = compileRuleGlob("/srv/data/**");
    if (!tree.ok) throw new Error("should compile");
    expect(tree.value("/srv/data")).toBe(true);
    expect(tree.value("/srv/data/a/b.txt")).toBe(true);
    expect(tree.value("/srv/data/../etc/passwd")).toBe(false);
    expect(tree.value("/srv/database")).toBe(false);
    const send = compileRuleGlob("send_*");
    const mail = compileRuleGlob("*@corp.com");
    if (!send.ok || !mail.ok) throw new Error("should compile");
    expect(send.value("send_email")).toBe(true);
    expect(send.value("send_a/b")).toBe(false);
    expect(mail.value("ann@corp.com")).toBe(true);
    expect(mail.value("a/b@corp.com")).toBe(false);
    expect(mail.value("ann@corp.com.evil")).toBe(false);
  });
});
