import { describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { yamlErrorMessage, yamlErrorPosition, yamlErrorText } from "../../src/index.js";

const BAD = "a: [\n  b,\n  - x\n]\n";

function thrown(text: string): unknown {
  try {
    parse(text);
  } catch (err) {
    return err;
  }
  throw new Error("expected a yaml error");
}

describe("yaml errors as FILE:LINE:COL: message", () => {
  it("drops the position and snippet the pretty form appends, once, at the front", () => {
    const err = thrown(BAD);
    expect((err as Error).message).toContain(" at line 3, column 3:\n"); // what the library says
    expect(yamlErrorText("bad.yml", err)).toBe(
      "bad.yml:3:3: block collections are not allowed within flow collections",
    );
    expect(yamlErrorPosition(err)).toEqual({ line: 3, column: 3 });
  });

  it("reads a document's errors the same, and says what failed when asked", () => {
    const err = parseDocument("a: 1\na: 2\n", { uniqueKeys: true }).errors[0];
    expect(yamlErrorText("c.yml", err, "not YAML or JSON")).toBe(
      "c.yml:2:1: not YAML or JSON: map keys must be unique",
    );
  });

  it("is the same without the pretty form", () => {
    const err = parseDocument(BAD, { prettyErrors: false }).errors[0];
    expect(yamlErrorMessage(err)).toBe("block collections are not allowed within flow collections");
  });

  it("an error with no position: the file and its first line", () => {
    expect(
      yamlErrorText("x.yml", new Error("Excessive alias count indicates a resource exhaustion attack\nmore")),
    ).toBe("x.yml: excessive alias count indicates a resource exhaustion attack");
    expect(yamlErrorMessage(new Error("YAML is odd."))).toBe("YAML is odd");
    expect(yamlErrorMessage("")).toBe("malformed yaml");
  });
});
