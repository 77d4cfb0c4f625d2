/**
 * `--json` output to a terminal shows the C1 controls, bidi overrides and invisible characters the data
 * holds as `\uXXXX` escapes (JSON.stringify leaves them raw: U+009B opens a CSI sequence on many
 * terminals, U+202E reorders what follows), and is still JSON of the same value; piped, it is as written.
 */
import { describe, expect, it } from "vitest";
import { printJson, type CliContext } from "../src/context.js";

function ctxWith(stdoutIsTTY: boolean): { ctx: CliContext; out: () => string } {
  let text = "";
  const ctx: CliContext = {
    io: {
      stdout: { write: (s: string) => (text += s) },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(""),
      stdinIsTTY: false,
      stdoutIsTTY,
      env: {},
      cwd: "/",
      now: () => new Date(),
    },
    exitCode: 0,
  };
  return { ctx, out: () => text };
}

const HOSTILE = {
  message: "line 3: \u009b2J\u009b31mALL CLEAR\u202egnp.exe",
  "key\u200b": ["\u007f", "tab\tnew\nline", "\u{e0041}tag", "ok"],
};

describe("printJson", () => {
  it("to a terminal: no raw control, format or invisible character; the same JSON value; the layout kept", () => {
    const { ctx, out } = ctxWith(true);
    printJson(ctx, HOSTILE);
    const text = out();
    expect(text).not.toMatch(/[\u007f-\u009f\u200b\u202e]|\u{e0041}/u);
    expect(text).toContain("\\u009b2J");
    expect(text).toContain("\\u202e");
    expect(JSON.parse(text)).toEqual(HOSTILE);
    expect(text.split("\n")).toHaveLength(JSON.stringify(HOSTILE, null, 2).split("\n").length + 1);
  });

  it("piped: the JSON as JSON.stringify writes it", () => {
    const { ctx, out } = ctxWith(false);
    printJson(ctx, HOSTILE);
    expect(out()).toBe(`${JSON.stringify(HOSTILE, null, 2)}\n`);
  });
});
