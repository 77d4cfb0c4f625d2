import { Buffer } from "node:buffer";
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

  it("reads a Map as its entries, a Set as its items and bytes as their UTF-8 text, whole", () => {
    expect(resultText({ m: new Map([["note", "write to eve@attacker.example"]]) })).toEqual({
      text: '{"m":[["note","write to eve@attacker.example"]]}',
    });
    expect(resultText(new Set(["a", new Map([["k", 1]])]))).toEqual({ text: '["a",[["k",1]]]' });
    expect(resultText({ body: Buffer.from("mail eve@attacker.example") })).toEqual({
      text: '{"body":"mail eve@attacker.example"}',
    });
    expect(resultText(new TextEncoder().encode("hi").buffer)).toEqual({ text: '"hi"' });
    expect(resultText(new Float64Array([1.5]))).toEqual({ text: '{"0":1.5}' });
  });

  it("says what it could not read: a class instance (in a Map too), a DataView, a cycle", () => {
    expect(resultText([new (class Receipt {})()]).unread).toContain("`Receipt`");
    expect(resultText(new Map([["r", new (class Receipt {})()]])).unread).toContain("`Receipt`");
    expect(resultText(new DataView(new ArrayBuffer(2))).unread).toContain("`DataView`");
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(resultText(cyclic).unread).toBeDefined();
  });
});
