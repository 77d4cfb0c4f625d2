import { describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import {
  missingColonHint,
  yamlErrorMessage,
  yamlErrorPlace,
  yamlErrorPosition,
  yamlErrorText,
} from "../../src/index.js";

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

describe("a key written without its `:` is named, not only the grammar the yaml library reports", () => {
  const errorOf = (text: string): unknown => parseDocument(text).errors[0];

  it.each([
    // the error is at the line itself
    ["proxy:\n  port: 1\n  bind 127.0.0.1\nsession:\n  x: 1\n", "bind", 3],
    ["version: 1\nchannel prompt\nproxy:\n  port: 1\n", "channel", 2],
    ["rules:\n  - id: a\n    action allow # the comment is not read\n    match: {}\n", "action", 3],
    // the yaml library reports the next key, comment lines later: the hint names the line before them
    ["proxy:\n  port 8443\n  # the port\n\n  # more\n  bind: 127.0.0.1\n", "port", 2],
    ["a: 1\n- id x\nb: 2\n", "id", 2],
  ])("%j: `%s` on line %i", (text, key, line) => {
    const err = errorOf(text);
    expect(err, "a yaml error").toBeDefined();
    expect(yamlErrorText("c.yml", err, undefined, text)).toMatch(
      new RegExp(` \\(is a \`:\` missing after \`${key}\` on line ${line}\\?\\)$`),
    );
  });

  it("says nothing when no line reads `key value`, or when the source is not given", () => {
    // mis-indented, every key with its `:`
    const indent = "proxy:\n  port: 1\n # c\n bind: 127.0.0.1\n";
    expect(yamlErrorText("c.yml", errorOf(indent), undefined, indent)).not.toContain("missing after");
    // a value with a `:` (a URL) is not read as a key without one
    const url = "a:\n  url http://x\n  # c\n  b: 1\n";
    expect(yamlErrorText("c.yml", errorOf(url), undefined, url)).not.toContain("missing after");
    // another kind of error
    expect(yamlErrorText("c.yml", errorOf(BAD), undefined, BAD)).not.toContain("missing after");
    const bare = "a:\n  b 1\n  # c\n  c: 2\n";
    expect(yamlErrorText("c.yml", errorOf(bare))).toBe("c.yml:4:1: all mapping items must start at the same column");
    expect(missingColonHint(bare, "BAD_INDENT", 4)).toBe("is a `:` missing after `b` on line 2?");
    expect(missingColonHint(bare, "DUPLICATE_KEY", 4)).toBeUndefined();
  });
});

describe("an error about the structure of lines is placed at the line at fault, not at the comments before it", () => {
  const errorOf = (text: string): unknown => parseDocument(text).errors[0];

  it("an example uncommented with the spaces after its `#`: the key's own line and both columns", () => {
    const text = "proxy:\n  port: 8443\n  # how many sessions:\n    max_sessions: 256\n";
    // the library puts it at the comment line (3:1)
    expect(yamlErrorPosition(errorOf(text))).toEqual({ line: 3, column: 1 });
    expect(yamlErrorText("c.yml", errorOf(text), undefined, text)).toBe(
      "c.yml:4:5: all mapping items must start at the same column (`max_sessions` starts at column 5, `port` on line 2 at column 3: the keys of one mapping start at the same column)",
    );
  });

  it("a sequence uncommented under a key that already has a value: the sequence's line", () => {
    const text = "proxy:\n  port: 1\n  # servers:\n    - name: files\n  upstream_servers: []\n";
    expect(yamlErrorText("c.yml", errorOf(text), undefined, text)).toMatch(
      /^c\.yml:4:5: a block sequence may not be used as an implicit map key/,
    );
  });

  it("a key indented deeper than the `key: value` before it: its own line, not the value before it", () => {
    const text = "rules:\n  - id: a\n    action: ask\n      level: high\n";
    // the library puts it at the value `ask` (3:13)
    expect(yamlErrorPosition(errorOf(text))).toEqual({ line: 3, column: 13 });
    expect(yamlErrorText("p.yml", errorOf(text), undefined, text)).toBe(
      "p.yml:4:7: nested mappings are not allowed in compact mappings (`level` starts at column 7, `action` on line 3 at column 5: the keys of one mapping start at the same column)",
    );
    // a deeper line that does not start with a key is left where the library put it
    const other = "a:\n  b: text\n    more [x]: y\n";
    expect(errorOf(other)).toBeDefined();
    expect(yamlErrorText("f.yml", errorOf(other), undefined, other)).toBe(yamlErrorText("f.yml", errorOf(other)));
  });

  it("a column in a line's indentation moves to its key; other errors keep the library's place", () => {
    const text = "proxy:\n  port 8443\n  # c\n  bind: 1\n";
    expect(yamlErrorPosition(errorOf(text))).toEqual({ line: 4, column: 1 });
    expect(yamlErrorText("c.yml", errorOf(text), undefined, text)).toMatch(/^c\.yml:4:3: /);
    // a tab is reported where it is
    const tab = "a:\n\tb: 1\n";
    expect(yamlErrorText("t.yml", errorOf(tab), undefined, tab)).toBe(yamlErrorText("t.yml", errorOf(tab)));
    expect(yamlErrorPlace("a: 1\n# c\nb: 2\n", "DUPLICATE_KEY", 2, 1)).toEqual({ line: 2, column: 1 });
  });
});
