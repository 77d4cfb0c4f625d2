import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkToolPrecheck, parseContractEventJson, refuseContractEnvelope } from "../../src/contract/index.js";
import { findDuplicateKey } from "../../src/contract/duplicate-key.js";
import { DOC } from "./fixtures.js";

/** The document's public read as text, with `extra` spliced in before the last field. */
function eventText(extra: string): string {
  const text = JSON.stringify(DOC.publicRead);
  const at = text.indexOf(',"recommended_route"');
  return `${text.slice(0, at)},${extra}${text.slice(at)}`;
}

describe("a repeated field name in event text is refused (parsers disagree on which value counts)", () => {
  it("refuses a repeated top-level field that would otherwise decide on its last value", () => {
    // JSON.parse keeps the last `tool_category` (public_read: it would pass); a first-wins reader sees `unknown`
    const raw = eventText('"tool_category":"public_read"').replace(
      '"tool_category":"public_read"',
      '"tool_category":"unknown"',
    );
    expect(checkToolPrecheck(JSON.parse(raw)).gate_decision).toBe("pass");
    const last = raw.lastIndexOf('"tool_category"');
    const result = parseContractEventJson(raw);
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          code: "contract_duplicate_key",
          path: ["tool_category"],
          message: "duplicate field `tool_category` (not I-JSON: JSON readers disagree on which value counts)",
          line: 1,
          column: last + 1,
        },
      ],
    });
    if (!result.ok) expect(refuseContractEnvelope(result.issues).recommended_action).toBe("refuse");
  });

  it("names the place of a repeated argument name, however deep", () => {
    const text = eventText('"proposed_arguments":{"a":{"list":[1,{"path":"/tmp/x","path":"/etc/shadow"}]}}').replace(
      '"proposed_arguments":{"query":"Agent Action Contract v1"},',
      "",
    );
    const result = parseContractEventJson(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues[0]).toMatchObject({
      code: "contract_duplicate_key",
      path: ["proposed_arguments", "a", "list", 1, "path"],
    });
  });

  it("compares names as decoded: an escaped spelling of the same name is the same name", () => {
    expect(findDuplicateKey('{"a":1,"\\u0061":2}')).toMatchObject({ key: "a", path: ["a"], offset: 7 });
  });

  it("does not mistake the same name in sibling or nested objects for a repeat", () => {
    const text = '{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}],"x":{"x":{"x":3}}}';
    expect(findDuplicateKey(text)).toBeUndefined();
    expect(parseContractEventJson(text).ok).toBe(true);
  });

  it("still checks an event without repeats as before", () => {
    const parsed = parseContractEventJson(JSON.stringify(DOC.publicRead));
    expect(parsed.ok && checkToolPrecheck(parsed.value).gate_decision).toBe("pass");
  });

  it("finds a repeat exactly when the text has an object with two members of one name (property)", () => {
    const key = fc.constantFrom("a", "b", "\\u0061", "__proto__");
    const json: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom("1", '"s"', "null", "[]", "{}"),
        fc.array(tie("node"), { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
        fc
          .array(fc.tuple(key, tie("node")), { maxLength: 3 })
          .map((members) => `{${members.map(([k, v]) => `"${k}":${v}`).join(" , ")}}`),
      ),
    })).node;
    fc.assert(
      fc.property(json, (text) => {
        expect(findDuplicateKey(text) !== undefined).toBe(hasRepeat(text));
      }),
      { numRuns: 500 },
    );
  });
});

/** The naive model: read every object's member names with a tokenizer and look for two equal ones. */
function hasRepeat(text: string): boolean {
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|[{}[\]:,]|[^\s{}[\]:,"]+/g) ?? [];
  const stack: (Set<string> | null)[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] ?? "";
    if (t === "{") stack.push(new Set());
    else if (t === "[") stack.push(null);
    else if (t === "}" || t === "]") stack.pop();
    else if (t.startsWith('"') && tokens[i + 1] === ":") {
      const names = stack[stack.length - 1];
      const name = JSON.parse(t) as string;
      if (names?.has(name) === true) return true;
      names?.add(name);
    }
  }
  return false;
}
