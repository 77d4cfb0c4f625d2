import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findKeyProblem } from "../src/http/json-body.js";

/** No key that reaches a prototype anywhere in the value's text. */
const safe = (v: unknown): boolean => !/"(__proto__|constructor)"/.test(JSON.stringify(v));

describe("findKeyProblem", () => {
  it("finds a key twice in one object, at any depth, however it is escaped", () => {
    expect(findKeyProblem('{"a":1,"a":2}')).toContain('"a" appears twice');
    expect(findKeyProblem('{"x":[{"b":1},{"c":{"d":1,"e":2,"d":3}}]}')).toContain('"d" appears twice');
    expect(findKeyProblem('{"tool":1,"t\\u006fol":2}')).toContain('"tool" appears twice');
    expect(findKeyProblem('{"a\\"":1,"a\\u0022":2}')).toContain("appears twice");
  });

  it("does not confuse values, strings holding quotes or braces, and sibling objects with keys", () => {
    expect(findKeyProblem('{"a":"a","b":{"a":1},"c":[{"a":1},{"a":2}]}')).toBeNull();
    expect(findKeyProblem('{"s":"\\\\","t":"\\"a\\":1,{\\"a\\":2","u":"}{][,"}')).toBeNull();
    expect(findKeyProblem('[{"a":1},{"a":1}]')).toBeNull();
    expect(findKeyProblem('{"prototype":1,"x":{"prototype":2}}')).toBeNull();
  });

  it("refuses keys that reach a prototype", () => {
    expect(findKeyProblem('{"a":{"__proto__":{}}}')).toContain("`__proto__`");
    expect(findKeyProblem('{"\\u005f_proto__":1}')).toContain("`__proto__`");
    expect(findKeyProblem('{"constructor":{"prototype":{}}}')).toContain("`prototype` inside `constructor`");
  });

  it("accepts the text of any JSON value (its keys are unique by construction) (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue().filter(safe), (value) => {
        expect(findKeyProblem(JSON.stringify(value))).toBeNull();
        expect(findKeyProblem(JSON.stringify(value, null, 2))).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it("finds the duplicate when any object of a JSON value gets one of its keys again (property)", () => {
    const withKeys = fc
      .dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 })
      .filter(safe);
    fc.assert(
      fc.property(withKeys, fc.jsonValue({ maxDepth: 2 }).filter(safe), (object, extra) => {
        const text = JSON.stringify(object);
        const key = Object.keys(object)[0] ?? "";
        const doubled = `{${JSON.stringify(key)}:${JSON.stringify(extra)},${text.slice(1)}`;
        expect(findKeyProblem(`{"outer":[${doubled}]}`)).toContain("appears twice");
      }),
      { numRuns: 300 },
    );
  });
});
