import { describe, expect, it } from "vitest";
import { resultText } from "../../src/guard/result-text.js";

describe("resultText: what the session runtime reads of a guarded function's result", () => {
  it("reads strings as they are and plain JSON values whole", () => {
    expect(resultText("hello")).toEqual({ text: "hello" });
    expect(resultText({ a: [1, "x", null], at: new Date(0) })).toEqual({
      text: '{"a":[1,"x",null],"at":"1970-01-01T00:00:00.000Z"}',
    });
    expect(resultText(undefined)).toEqual({ text: "" });
  });

  it("says what it could not read: a Map, a class instance, a cycle", () => {
    expect(resultText({ m: new Map([["k", "v"]]) }).unread).toContain("`Map`");
    expect(resultText([new (class Receipt {})()]).unread).toContain("`Receipt`");
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(resultText(cyclic).unread).toBeDefined();
  });
});
