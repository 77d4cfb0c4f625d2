/**
 * Where JSON text first goes wrong. `JSON.parse` on Node 20 often reports no position, so this small
 * iterative scanner (no recursion: deep nesting cannot exhaust the stack) finds the offending offset.
 */

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/** Reads JSON tokens from a position (shared with the duplicate-key scan). */
export class Scanner {
  i = 0;
  constructor(readonly text: string) {}

  skipWhitespace(): void {
    while (WHITESPACE.has(this.text[this.i] ?? "")) this.i++;
  }

  /** Reads a string starting at its opening quote; false at the first bad character. */
  readString(): boolean {
    this.i++;
    for (;;) {
      const c = this.text[this.i];
      if (c === undefined) return false;
      if (c === '"') {
        this.i++;
        return true;
      }
      if (c === "\\") {
        const next = this.text[this.i + 1] ?? "";
        if (ESCAPES.has(next)) this.i += 2;
        else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) this.i += 6;
        else return false;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) return false;
      this.i++;
    }
  }

  /** Reads `"key" :`; false at the first bad character. */
  readKey(): boolean {
    this.skipWhitespace();
    if (this.text[this.i] !== '"' || !this.readString()) return false;
    this.skipWhitespace();
    if (this.text[this.i] !== ":") return false;
    this.i++;
    return true;
  }

  /** Reads a scalar; false when none starts here. */
  readScalar(): boolean {
    for (const literal of ["true", "false", "null"]) {
      if (this.text.startsWith(literal, this.i)) {
        this.i += literal.length;
        return true;
      }
    }
    NUMBER.lastIndex = this.i;
    const match = NUMBER.exec(this.text);
    if (match === null || match[0] === "") return false;
    this.i += match[0].length;
    return true;
  }
}

/** Opens a container at the scanner's position; returns whether a value is still expected. */
function open(s: Scanner, stack: string[]): boolean | undefined {
  const c = s.text[s.i];
  const close = c === "{" ? "}" : "]";
  s.i++;
  s.skipWhitespace();
  if (s.text[s.i] === close) {
    s.i++;
    return false;
  }
  stack.push(close);
  if (c === "{" && !s.readKey()) return undefined;
  return true;
}

/** The offset of the first syntax error in `text`, or -1 when the scanner finds none. */
export function findJsonErrorOffset(text: string): number {
  const s = new Scanner(text);
  const stack: string[] = [];
  let expectValue = true;
  for (;;) {
    s.skipWhitespace();
    const c = s.text[s.i];
    if (expectValue) {
      if (c === "{" || c === "[") {
        const next = open(s, stack);
        if (next === undefined) return s.i;
        expectValue = next;
      } else if (c === '"' ? !s.readString() : !s.readScalar()) return s.i;
      else expectValue = false;
      continue;
    }
    const close = stack[stack.length - 1];
    if (close === undefined) return s.i < text.length ? s.i : -1;
    if (c === close) {
      s.i++;
      stack.pop();
    } else if (c === ",") {
      s.i++;
      if (close === "}" && !s.readKey()) return s.i;
      expectValue = true;
    } else return s.i;
  }
}
