/**
 * The parser of {@link compileLinearRegex}'s dialect: the regular expressions picomatch compiles globs
 * into (literals and escapes, `.`, classes, groups, alternation, quantifiers, `^`, `$`, lookaheads),
 * parsed into a tree the matcher compiles. What it does not implement it refuses.
 */

/** A predicate over one UTF-16 code unit (the expressions carry no `u` flag). */
export type CodeTest = (code: number) => boolean;

export type Node =
  | { readonly t: "char"; readonly test: CodeTest }
  | { readonly t: "seq"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly options: readonly Node[] }
  | { readonly t: "repeat"; readonly body: Node; readonly min: number; readonly max: number }
  | { readonly t: "start" }
  | { readonly t: "end" }
  | { readonly t: "look"; readonly body: Node; readonly negate: boolean };

/** Thrown for a construct this matcher does not implement (the glob is then refused, never matched loosely). */
export class UnsupportedRegexError extends Error {}

const LINE_TERMINATORS = new Set([0x0a, 0x0d, 0x2028, 0x2029]);
const anyButLineTerminator: CodeTest = (c) => !LINE_TERMINATORS.has(c);
const ANY_CODE: CodeTest = () => true;
const isDigit: CodeTest = (c) => c >= 0x30 && c <= 0x39;
const isWord: CodeTest = (c) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const WHITESPACE = /\s/;
const isSpace: CodeTest = (c) => WHITESPACE.test(String.fromCharCode(c));

const CLASS_ESCAPES: Readonly<Record<string, CodeTest>> = {
  d: isDigit,
  D: (c) => !isDigit(c),
  w: isWord,
  W: (c) => !isWord(c),
  s: isSpace,
  S: (c) => !isSpace(c),
};

const CONTROL_ESCAPES: Readonly<Record<string, number>> = { n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b, f: 0x0c, "0": 0 };

/** A recursive-descent parser of the expression source. */
export class Parser {
  private pos = 0;
  /** `dotAll`: the `s` flag, `.` matches line terminators too. */
  constructor(
    private readonly src: string,
    private readonly dotAll = false,
  ) {}

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.src.length) throw new UnsupportedRegexError(`unexpected \`${this.src[this.pos]}\``);
    return node;
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.src[this.pos] === "|") {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as Node) : { t: "alt", options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length && this.src[this.pos] !== "|" && this.src[this.pos] !== ")") {
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? (items[0] as Node) : { t: "seq", items };
  }

  private quantified(atom: Node): Node {
    const c = this.src[this.pos];
    let min: number;
    let max: number;
    if (c === "*" || c === "+" || c === "?") {
      this.pos++;
      [min, max] = c === "*" ? [0, Infinity] : c === "+" ? [1, Infinity] : [0, 1];
    } else {
      const braces = c === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos)) : null;
      if (braces === null) return atom;
      this.pos += braces[0].length;
      min = Number(braces[1]);
      max = braces[2] === undefined ? min : braces[3] === "" ? Infinity : Number(braces[3]);
    }
    if (this.src[this.pos] === "?") this.pos++; // lazy or greedy: the same set of matches
    if (atom.t === "start" || atom.t === "end" || atom.t === "look")
      return atom.t === "look" && min === 0 ? EMPTY : atom;
    return { t: "repeat", body: atom, min, max };
  }

  private atom(): Node {
    const c = this.src[this.pos++] as string;
    switch (c) {
      case "^":
        return { t: "start" };
      case "$":
        return { t: "end" };
      case ".":
        return { t: "char", test: this.dotAll ? ANY_CODE : anyButLineTerminator };
      case "(":
        return this.group();
      case "[":
        return { t: "char", test: this.charClass() };
      case "\\":
        return { t: "char", test: this.escape(false).test };
      case "*":
      case "+":
      case "?":
        throw new UnsupportedRegexError(`nothing to repeat before \`${c}\``);
      default:
        return literal(c.charCodeAt(0));
    }
  }

  private group(): Node {
    let look: boolean | undefined;
    if (this.src.startsWith("?:", this.pos)) this.pos += 2;
    else if (this.src.startsWith("?=", this.pos) || this.src.startsWith("?!", this.pos)) {
      look = this.src[this.pos + 1] === "!";
      this.pos += 2;
    } else if (this.src[this.pos] === "?") throw new UnsupportedRegexError("lookbehind or named group");
    const body = this.alternation();
    if (this.src[this.pos] !== ")") throw new UnsupportedRegexError("unclosed group");
    this.pos++;
    return look === undefined ? body : { t: "look", body, negate: look };
  }

  /** An escape after `\`: its code unit when it stands for one, and its test. Inside a class `\b` is a backspace. */
  private escape(inClass: boolean): { code: number | undefined; test: CodeTest } {
    const c = this.src[this.pos++];
    if (c === undefined) throw new UnsupportedRegexError("trailing backslash");
    const named = CLASS_ESCAPES[c];
    if (named !== undefined) return { code: undefined, test: named };
    let code: number | undefined = inClass && c === "b" ? 8 : CONTROL_ESCAPES[c];
    if (c === "0" && isDigit(this.src.charCodeAt(this.pos))) code = undefined;
    const hex = c === "x" ? /^[0-9A-Fa-f]{2}/ : c === "u" ? /^[0-9A-Fa-f]{4}/ : undefined;
    if (hex !== undefined) {
      const digits = hex.exec(this.src.slice(this.pos));
      if (digits === null) throw new UnsupportedRegexError(`escape \`\\${c}\``);
      this.pos += digits[0].length;
      code = parseInt(digits[0], 16);
    }
    if (code === undefined) {
      if (/[A-Za-z0-9]/.test(c)) throw new UnsupportedRegexError(`escape \`\\${c}\``);
      code = c.charCodeAt(0);
    }
    const only = code;
    return { code: only, test: (x) => x === only };
  }

  /** One class atom: its code unit when it is a single one (a range end), and its test. */
  private classAtom(): { code: number | undefined; test: CodeTest } {
    if (this.src[this.pos] === "\\") {
      this.pos++;
      return this.escape(true);
    }
    const code = this.src.charCodeAt(this.pos++);
    return { code, test: (x) => x === code };
  }

  private charClass(): CodeTest {
    const negate = this.src[this.pos] === "^";
    if (negate) this.pos++;
    const tests: CodeTest[] = [];
    while (this.src[this.pos] !== "]") {
      if (this.pos >= this.src.length) throw new UnsupportedRegexError("unclosed class");
      const low = this.classAtom();
      if (this.src[this.pos] === "-" && this.src[this.pos + 1] !== "]" && this.pos + 1 < this.src.length) {
        this.pos++;
        const high = this.classAtom();
        if (low.code !== undefined && high.code !== undefined) {
          const [a, b] = [low.code, high.code];
          if (a > b) throw new UnsupportedRegexError("range out of order in class");
          tests.push((x) => x >= a && x <= b);
          continue;
        }
        tests.push(low.test, (x) => x === 0x2d, high.test); // Annex B: `[\d-z]` is `\d`, `-` or `z`
        continue;
      }
      tests.push(low.test);
    }
    this.pos++;
    const inClass = (x: number): boolean => tests.some((test) => test(x));
    return negate ? (x) => !inClass(x) : inClass;
  }
}

const EMPTY: Node = { t: "seq", items: [] };

function literal(code: number): Node {
  return { t: "char", test: (x) => x === code };
}
