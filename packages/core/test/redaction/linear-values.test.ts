/**
 * `redaction.values` are patterns a person writes, run over text an agent or a server chose: they run in
 * the linear-time matcher, never in V8's backtracking engine, and what it cannot run in linear time is
 * refused when the config is read.
 */
import { describe, expect, it } from "vitest";
import { createRedactor, parseRedactionConfig, REDACTED } from "../../src/index.js";

function redactorFor(values: string[]) {
  const parsed = parseRedactionConfig({ values, defaults: false });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return createRedactor(parsed.value);
}

describe("redaction.values in the linear-time matcher", () => {
  it("runs a classic ReDoS pattern over a long hostile string, and still hides what it matches", () => {
    // `^(a+)+$` against 100,000 `a` and a `!`: V8 backtracks 2^100000 ways; here one pass
    const redact = redactorFor(["^(a+)+$", "(x+x+)+y"]);
    const hostile = `${"a".repeat(100_000)}!`;
    expect(redact(hostile)).toBe(hostile);
    expect(redact(`${"x".repeat(50_000)}`)).toBe("x".repeat(50_000));
    expect(redact("aaaa")).toBe(REDACTED);
    expect(redact({ note: "xxxy and more" })).toEqual({ note: `${REDACTED} and more` });
  });

  it("reports V8's matches: flags, lazy quantifiers, alternatives in order, word boundaries", () => {
    const redact = redactorFor(["/ACME-[a-z]{4}/i", "\\bpin=\\d+?\\b", "tok_(?:ab|a)"]);
    expect(redact("key acme-WXYZ; pin=1234 tok_ab")).toBe(`key ${REDACTED}; ${REDACTED} ${REDACTED}`);
    expect(redact("spin=12")).toBe("spin=12");
  });

  it("refuses at load time what cannot run in linear time, saying what and where", () => {
    const parsed = parseRedactionConfig({
      values: ["ok-[0-9]+", "(a)\\1", "/(?<=key=)\\w+/", "(?=x)y", "/x/u", "(?:a*)*b", "(unclosed"],
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => [i.code, i.path[2]])).toEqual([
      ["redaction_pattern_unsupported", 1],
      ["redaction_pattern_unsupported", 2],
      ["redaction_pattern_unsupported", 3],
      ["redaction_pattern_unsupported", 4],
      ["redaction_pattern_unsupported", 5],
      ["redaction_pattern_invalid", 6],
    ]);
    const messages = parsed.issues.map((i) => i.message);
    expect(messages[0]).toMatch(/^`redaction\.values\.1`: backreference `\\1` at character 4 is refused: /);
    expect(messages[1]).toMatch(/^`redaction\.values\.2`: lookbehind `\(\?<=` at character 2 is refused/);
    expect(messages[2]).toMatch(/lookahead `\(\?=` at character 1/);
    expect(messages[3]).toMatch(/flag `u`/);
    expect(messages[4]).toMatch(/repetition of something that can match nothing .* at character 7/);
  });
});
