/**
 * A strict JSON reader that remembers where every key and value starts, refuses duplicate keys,
 * absurd sizes and deep nesting, and never throws. Objects come back with a null prototype, so a key
 * such as `__proto__` or `constructor` is plain data.
 */
import type { Issue, Result } from "../issues/index.js";

/** A 1-based place in the source text. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** Where a value (and, for an object member, its key) starts. */
export interface PositionEntry {
  readonly value: SourcePosition;
  readonly key?: SourcePosition;
}

/** A parsed JSON document with its position map (keyed by `positionKey(path)`). */
export interface PositionedJson {
  readonly value: unknown;
  readonly positions: ReadonlyMap<string, PositionEntry>;
}

/** Limits for `readJson`. */
export interface JsonLimits {
  /** Largest text accepted, in characters. */
  readonly maxLength: number;
  /** Deepest nesting of objects and arrays accepted. */
  readonly maxDepth: number;
  /** Longest array accepted; reading stops at the first item past it (default: no limit). */
  readonly maxItems?: number;
}

/** The key of a path in a position map. */
export function positionKey(path: readonly (string | number)[]): string {
  return JSON.stringify(path);
}

class JsonSyntaxError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly offset: number,
    readonly path: readonly (string | number)[] = [],
  ) {
    super(message);
  }
}

/** Reads JSON text; syntax errors and limit breaches come back as one issue with line and column. */
export function readJson(text: string, limits: JsonLimits): Result<PositionedJson> {
  if (text.length > limits.maxLength) {
    const message = `graph too large: ${text.length} characters (limit ${limits.maxLength})`;
    return { ok: false, issues: [{ code: "graph_too_large", path: [], message }] };
  }
  const reader = new Reader(text, limits.maxDepth, limits.maxItems ?? Infinity);
  try {
    const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    reader.pos = start;
    reader.skipSpace();
    const value = reader.readValue([], 0);
    reader.skipSpace();
    if (reader.pos < text.length) reader.fail("json_syntax", "unexpected content after the JSON value");
    return { ok: true, value: { value, positions: reader.positions } };
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const where = reader.locate(err.offset);
    const issue: Issue = {
      code: err.code,
      path: err.path,
      message: err.message,
      line: where.line,
      column: where.column,
    };
    return { ok: false, issues: [issue] };
  }
}

class Reader {
  pos = 0;
  readonly positions = new Map<string, PositionEntry>();
  private readonly lineStarts: number[] = [0];

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
    private readonly maxItems: number,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  locate(offset: number): SourcePosition {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (this.lineStarts[lo] ?? 0) + 1 };
  }

  fail(code: string, message: string, offset = this.pos, path: readonly (string | number)[] = []): never {
    throw new JsonSyntaxError(code, message, offset, path);
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.pos++;
      else break;
    }
  }

  private describeHere(): string {
    if (this.pos >= this.text.length) return "unexpected end of input";
    return `unexpected character \`${this.text.charAt(this.pos)}\``;
  }

  readValue(path: (string | number)[], depth: number, keyAt?: SourcePosition): unknown {
    const at = this.locate(this.pos);
    this.positions.set(positionKey(path), keyAt === undefined ? { value: at } : { value: at, key: keyAt });
    const c = this.text.charAt(this.pos);
    if (c === "{" || c === "[") {
      if (depth >= this.maxDepth) this.fail("graph_too_deep", `nesting deeper than ${this.maxDepth} levels`);
      return c === "{" ? this.readObject(path, depth + 1) : this.readArray(path, depth + 1);
    }
    if (c === '"') return this.readString();
    if (c === "-" || (c >= "0" && c <= "9")) return this.readNumber();
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail("json_syntax", `${this.describeHere()} (expected a JSON value)`);
  }

  private readObject(path: (string | number)[], depth: number): Record<string, unknown> {
    const out = Object.create(null) as Record<string, unknown>;
    this.pos++;
    this.skipSpace();
    if (this.text.charAt(this.pos) === "}") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charAt(this.pos) !== '"') this.fail("json_syntax", `${this.describeHere()} (expected a key)`);
      const keyOffset = this.pos;
      const key = this.readString();
      if (Object.hasOwn(out, key)) this.fail("duplicate_key", `duplicate key \`${key}\``, keyOffset);
      this.skipSpace();
      if (this.text.charAt(this.pos) !== ":") this.fail("json_syntax", `${this.describeHere()} (expected \`:\`)`);
      this.pos++;
      this.skipSpace();
      out[key] = this.readValue([...path, key], depth, this.locate(keyOffset));
      this.skipSpace();
      const next = this.text.charAt(this.pos);
      this.pos++;
      if (next === "}") return out;
      if (next !== ",") this.fail("json_syntax", `${this.describeHereAt(-1)} (expected \`,\` or \`}\`)`, this.pos - 1);
    }
  }

  private describeHereAt(delta: number): string {
    this.pos += delta;
    const text = this.describeHere();
    this.pos -= delta;
    return text;
  }

  private readArray(path: (string | number)[], depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text.charAt(this.pos) === "]") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (out.length >= this.maxItems) {
        const where = path.length === 0 ? "the document" : `\`${path.join(".")}\``;
        this.fail(
          "graph_too_large",
          `${where} lists more than ${this.maxItems} items (limit ${this.maxItems})`,
          this.pos,
          path,
        );
      }
      out.push(this.readValue([...path, out.length], depth));
      this.skipSpace();
      const next = this.text.charAt(this.pos);
      this.pos++;
      if (next === "]") return out;
      if (next !== ",") this.fail("json_syntax", `${this.describeHereAt(-1)} (expected \`,\` or \`]\`)`, this.pos - 1);
    }
  }

  private readString(): string {
    const t = this.text;
    const start = this.pos;
    this.pos++;
    let out = "";
    let chunk = this.pos;
    for (;;) {
      if (this.pos >= t.length) this.fail("json_syntax", "unterminated string", start);
      const c = t.charCodeAt(this.pos);
      if (c === 34) {
        out += t.slice(chunk, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) this.fail("json_syntax", "control character in string (escape it)");
      if (c === 92) {
        out += t.slice(chunk, this.pos);
        out += this.readEscape();
        chunk = this.pos;
      } else {
        this.pos++;
      }
    }
  }

  private readEscape(): string {
    const t = this.text;
    const e = t.charAt(this.pos + 1);
    const simple: Record<string, string> = {
      '"': '"',
      "\\": "\\",
      "/": "/",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
    };
    if (Object.hasOwn(simple, e)) {
      this.pos += 2;
      return simple[e] ?? "";
    }
    if (e === "u") {
      const hex = t.slice(this.pos + 2, this.pos + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("json_syntax", "invalid `\\u` escape");
      this.pos += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    return this.fail("json_syntax", "invalid escape in string");
  }

  private readNumber(): number {
    const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(
      this.text.slice(this.pos, this.pos + 400),
    );
    if (match === null) return this.fail("json_syntax", "invalid number");
    this.pos += match[0].length;
    const next = this.text.charAt(this.pos);
    if (/[0-9.eE+-]/.test(next)) this.fail("json_syntax", "invalid number");
    const value = Number(match[0]);
    if (!Number.isFinite(value)) this.fail("json_syntax", "number out of range", this.pos - match[0].length);
    return value;
  }
}
