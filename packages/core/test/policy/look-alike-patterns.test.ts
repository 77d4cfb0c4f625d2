import { describe, expect, it } from "vitest";
import { assertPolicy, findLookAlikePatterns } from "../../src/index.js";

describe("findLookAlikePatterns", () => {
  it("warns about a tool or server that passes for another name, in rules and classify", () => {
    const policy = assertPolicy(`version: "1"
rules:
  - id: reads
    match: { tool: rеad_file }
    action: allow
  - id: prod
    match: { server: "prоd-*" }
    action: ask
  - id: fine
    match: { tool: получить_погоду, server: files }
    action: allow
classify:
  - { tool: wіre_money, category: financial }
`);
    const warnings = findLookAlikePatterns(policy);
    expect(warnings.map((w) => [w.code, w.path.join("."), w.line])).toEqual([
      ["look_alike_pattern", "rules.0.match.tool", 3],
      ["look_alike_pattern", "rules.1.match.server", 6],
      ["look_alike_pattern", "classify.0.tool", undefined],
    ]);
    expect(warnings[0]?.message).toBe(
      "rule `reads`: `tool` `rеad_file` holds U+0435, which reads as `e`: it looks like `read_file` but no call to that name meets it as written",
    );
    expect(warnings[0]?.help).toBe("write it in ASCII: `tool: read_file` (if that is the name meant)");
  });

  it("warns about a pattern written wholly in letters of another script that pass for Latin ones", () => {
    const policy = assertPolicy(`version: "1"
rules:
  - id: scope
    match: { tool: "ѕсоре_*" }
    action: allow
  - id: weather
    match: { tool: получить_погоду, server: почта }
    action: allow
`);
    const warnings = findLookAlikePatterns(policy);
    expect(warnings.map((w) => w.path.join("."))).toEqual(["rules.0.match.tool"]);
    expect(warnings[0]?.message).toBe(
      "rule `scope`: `tool` `ѕсоре_*` is written in Cyrillic letters where `ѕсоре` reads as `scope`: it looks like `scope_*` but no call to that name meets it as written",
    );
  });
});
