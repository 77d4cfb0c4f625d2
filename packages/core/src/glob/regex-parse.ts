/**
 * The parser of {@link compileLinearRegex}'s dialect: the regular expressions picomatch compiles globs
 * into (literals and escapes, `.`, classes, groups, alternation, quantifiers, `^`, `$`, lookaheads),
 * parsed into a tree the matcher compiles. What it does not implement it refuses.
 */

/** A predicate over one UTF-16 code unit (the expressions carry no `u` flag). */
export type CodeTest = (code: number) => boolean;

export type Node =
  | {
      readonly t: "char";
      readonly test: CodeTest;
      /** The one code unit it matches, for a plain literal. */ readonly code?: number;
    }
  | { readonly t: "seq"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly options: readonly Node[] }
  | {
      readonly t: "repeat";
      readonly body: Node;
      readonly min: number;
      readonly max: number;
      readonly lazy: boolean;
      /** Where its quantifier stands in the source. */
      readonly at?: number;
    }
  | { readonly t: "start"; readonly multiline: boolean }
  | { readonly t: "end"; readonly multiline: boolean }
  | { readonly t: "boundary"; readonly negate: boolean }
  | { readonly t: "look"; readonly body: Node; readonly negate: boolean };

/**
 * Thrown for a construct this matcher does not implement (the glob or pattern is then refused, never
 * matched loosely); `index` is where in the source it stands, when known.
 */
export class UnsupportedRegexError extends Error {
  constructor(
    message: string,
    readonly index?: number,
  ) {
    super(message);
  }
}

/** How the source is read: its flags, and whether lookarounds may be run (their cost is not linear). */
export interface ParserOptions {
  /** `s`: `.` matches line terminators too. */
  readonly dotAll?: boolean;
  /** `i`: letters match in either case, as V8 compares them without `u`. */
  readonly ignoreCase?: boolean;
  /** `m`: `^` and `$` also match at line terminators. */
  readonly multiline?: boolean;
  /** Lookaheads are parsed (picomatch emits them); otherwise any lookaround is refused. Default true. */
  readonly lookahead?: boolean;
}

/** Line terminators of ECMAScript (`.` does not match them; `^`/`$` meet them with `m`). */
export const LINE_TERMINATORS: ReadonlySet<number> = new Set([0x0a, 0x0d, 0x2028, 0x2029]);
const anyButLineTerminator: CodeTest = (c) => !LINE_TERMINATORS.has(c);
const ANY_CODE: CodeTest = () => true;
const isDigit: CodeTest = (c) => c >= 0x30 && c <= 0x39;
export const isWord: CodeTest = (c) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
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
  private readonly dotAll: boolean;
  private readonly options: ParserOptions;
  constructor(
    private readonly src: string,
    options: ParserOptions | boolean = {},
  ) {
    this.options = typeof options === "boolean" ? { dotAll: options } : options;
    this.dotAll = this.options.dotAll === true;
  }

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.src.length) this.fail(`unexpected \`${this.src[this.pos]}\``);
    return node;
  }

  private fail(message: string, at = this.pos): never {
    throw new UnsupportedRegexError(message, at);
  }

  /** A character test, made caseless under `i`. */
  private char(test: CodeTest, code?: number): Node {
    if (this.options.ignoreCase === true) return { t: "char", test: caseless(test) };
    return code === undefined ? { t: "char", test } : { t: "char", test, code };
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
    const at = this.pos;
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
    // lazy or greedy: the same set of matches, but another match first when a search reports where
    const lazy = this.src[this.pos] === "?";
    if (lazy) this.pos++;
    if (min > max) this.fail("numbers out of order in `{}` quantifier");
    if (atom.t === "start" || atom.t === "end" || atom.t === "look" || atom.t === "boundary")
      return (atom.t === "look" || atom.t === "boundary") && min === 0 ? EMPTY : atom;
    return { t: "repeat", body: atom, min, max, lazy, at };
  }

  private atom(): Node {
    const c = this.src[this.pos++] as string;
    const multiline = this.options.multiline === true;
    switch (c) {
      case "^":
        return { t: "start", multiline };
      case "$":
        return { t: "end", multiline };
      case ".":
        return { t: "char", test: this.dotAll ? ANY_CODE : anyButLineTerminator };
      case "(":
        return this.group();
      case "[":
        return { t: "char", test: this.charClass() }; // caseless inside, before any `^` negates it
      case "\\": {
        const b = this.src[this.pos];
        if (b === "b" || b === "B") {
          this.pos++;
          return { t: "boundary", negate: b === "B" };
        }
        const escaped = this.escape(false);
        return this.char(escaped.test, escaped.code);
      }
      case "*":
      case "+":
      case "?":
        return this.fail(`nothing to repeat before \`${c}\``, this.pos - 1);
      default:
        return this.char((x) => x === c.charCodeAt(0), c.charCodeAt(0));
    }
  }

  private group(): Node {
    const open = this.pos - 1;
    let look: boolean | undefined;
    const lookahead = this.src.startsWith("?=", this.pos) || this.src.startsWith("?!", this.pos);
    const lookbehind = this.src.startsWith("?<=", this.pos) || this.src.startsWith("?<!", this.pos);
    if (this.src.startsWith("?:", this.pos)) this.pos += 2;
    else if (lookahead && this.options.lookahead !== false) {
      look = this.src[this.pos + 1] === "!";
      this.pos += 2;
    } else if (lookahead || lookbehind) {
      this.fail(
        `${lookahead ? "lookahead" : "lookbehind"} \`(${this.src.slice(this.pos, this.pos + (lookahead ? 2 : 3))}\``,
        open,
      );
    } else if (/^\?<[A-Za-z_$][\w$]*>/.test(this.src.slice(this.pos))) {
      this.pos = this.src.indexOf(">", this.pos) + 1; // a named group: a group (nothing is captured here)
    } else if (this.src[this.pos] === "?") this.fail(`group \`(${this.src.slice(this.pos, this.pos + 2)}\``, open);
    const body = this.alternation();
    if (this.src[this.pos] !== ")") this.fail("unclosed group", open);
    this.pos++;
    return look === undefined ? body : { t: "look", body, negate: look };
  }

  /** An escape after `\`: its code unit when it stands for one, and its test. Inside a class `\b` is a backspace. */
  private escape(inClass: boolean): { code: number | undefined; test: CodeTest } {
    const c = this.src[this.pos++];
    if (c === undefined) this.fail("trailing backslash", this.pos - 1);
    if (/[1-9]/.test(c) || (c === "k" && this.src[this.pos] === "<"))
      this.fail(`backreference \`\\${c}\``, this.pos - 2);
    const named = CLASS_ESCAPES[c];
    if (named !== undefined) return { code: undefined, test: named };
    let code: number | undefined = inClass && c === "b" ? 8 : CONTROL_ESCAPES[c];
    if (c === "0" && isDigit(this.src.charCodeAt(this.pos))) code = undefined;
    const hex = c === "x" ? /^[0-9A-Fa-f]{2}/ : c === "u" ? /^[0-9A-Fa-f]{4}/ : undefined;
    if (hex !== undefined) {
      const digits = hex.exec(this.src.slice(this.pos));
      if (digits === null) this.fail(`escape \`\\${c}\``, this.pos - 2);
      this.pos += digits[0].length;
      code = parseInt(digits[0], 16);
    }
    if (code === undefined) {
      if (/[A-Za-z0-9]/.test(c)) this.fail(`escape \`\\${c}\``, this.pos - 2);
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
      if (this.pos >= this.src.length) this.fail("unclosed class");
      const low = this.classAtom();
      if (this.src[this.pos] === "-" && this.src[this.pos + 1] !== "]" && this.pos + 1 < this.src.length) {
        this.pos++;
        const high = this.classAtom();
        if (low.code !== undefined && high.code !== undefined) {
          const [a, b] = [low.code, high.code];
          if (a > b) this.fail("range out of order in class");
          tests.push((x) => x >= a && x <= b);
          continue;
        }
        tests.push(low.test, (x) => x === 0x2d, high.test); // Annex B: `[\d-z]` is `\d`, `-` or `z`
        continue;
      }
      tests.push(low.test);
    }
    this.pos++;
    const members = (x: number): boolean => tests.some((test) => test(x));
    // under `i` a unit is in the class when a unit of its case is (ECMA-262 CharacterSetMatcher), then negated
    const inClass = this.options.ignoreCase === true ? caseless(members) : members;
    return negate ? (x) => !inClass(x) : inClass;
  }
}

const EMPTY: Node = { t: "seq", items: [] };

/**
 * V8's `Canonicalize` without `u` (ECMA-262 §22.2.2.7.3): the upper case of a code unit when that is one
 * code unit, and not ASCII for a non-ASCII unit; two units match under `i` when theirs are equal.
 */
function canonicalize(code: number): number {
  const upper = String.fromCharCode(code).toUpperCase();
  if (upper.length !== 1) return code;
  const canonical = upper.charCodeAt(0);
  return code >= 128 && canonical < 128 ? code : canonical;
}

/** Code units by their canonical unit (only those with company), made on the first caseless pattern. */
let caseClasses: Map<number, number[]> | undefined;

function classOf(code: number): readonly number[] | undefined {
  if (caseClasses === undefined) {
    const all = new Map<number, number[]>();
    for (let unit = 0; unit <= 0xffff; unit++) {
      const canonical = canonicalize(unit);
      const list = all.get(canonical);
      if (list === undefined) all.set(canonical, [unit]);
      else list.push(unit);
    }
    caseClasses = new Map([...all].filter(([, units]) => units.length > 1));
  }
  return caseClasses.get(canonicalize(code));
}

/** A test under `i`: it holds for a unit when it holds for any unit of the same canonical unit. */
function caseless(test: CodeTest): CodeTest {
  return (code) => {
    if (test(code)) return true;
    const units = classOf(code);
    return units !== undefined && units.some((unit) => unit !== code && test(unit));
  };
}
