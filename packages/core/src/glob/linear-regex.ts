/**
 * A regular-expression matcher whose time is linear in the length of the text (times the size of the
 * pattern), for the dialect picomatch compiles globs into: literals and escapes, `.`, classes, groups,
 * alternation, greedy and lazy quantifiers, `^`, `$` and lookaheads. V8's engine backtracks, so a glob a
 * policy holds (`*@*.corp.com`, `*a*a*a*b`) against a long argument an agent chose took time polynomial in
 * its length with the number of stars as the exponent (minutes for one call). This one runs the same
 * expression as a Thompson NFA, every thread in step (Pike's VM): whether a text matches, never how, so the
 * answer is exactly V8's and the time is bounded. A lookahead is run by the same machine from the
 * position it is asked at.
 */

/** A predicate over one UTF-16 code unit (the expressions carry no `u` flag). */
type CodeTest = (code: number) => boolean;

type Node =
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

/** Most states of one compiled expression (picomatch's stay in the hundreds for a 1,024-character glob). */
const MAX_STATES = 100_000;

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
class Parser {
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

const enum Op {
  Char,
  Split,
  Jump,
  Start,
  End,
  Look,
  Match,
}

/** One compiled expression (or lookahead body): parallel arrays indexed by state. */
interface Program {
  readonly op: Op[];
  /** Char: the test; Look: the lookahead's program index in `looks`. */
  readonly test: (CodeTest | undefined)[];
  /** Jump/Split: targets; Look: whether it is negative (1). */
  readonly a: number[];
  readonly b: number[];
  readonly looks: Program[];
}

function emit(p: Program, op: Op, a = 0, b = 0, test?: CodeTest): number {
  if (p.op.length >= MAX_STATES) throw new UnsupportedRegexError("expression too large");
  p.op.push(op);
  p.a.push(a);
  p.b.push(b);
  p.test.push(test);
  return p.op.length - 1;
}

function compileNode(p: Program, node: Node): void {
  switch (node.t) {
    case "char":
      emit(p, Op.Char, 0, 0, node.test);
      return;
    case "start":
      emit(p, Op.Start);
      return;
    case "end":
      emit(p, Op.End);
      return;
    case "seq":
      for (const item of node.items) compileNode(p, item);
      return;
    case "look":
      p.looks.push(compileProgram(node.body));
      emit(p, Op.Look, p.looks.length - 1, node.negate ? 1 : 0);
      return;
    case "alt":
      compileAlternatives(p, node.options);
      return;
    case "repeat":
      compileRepeat(p, node);
  }
}

function compileAlternatives(p: Program, options: readonly Node[]): void {
  const jumps: number[] = [];
  for (let i = 0; i < options.length - 1; i++) {
    const split = emit(p, Op.Split);
    p.a[split] = split + 1;
    compileNode(p, options[i] as Node);
    jumps.push(emit(p, Op.Jump));
    p.b[split] = p.op.length;
  }
  compileNode(p, options[options.length - 1] as Node);
  for (const jump of jumps) p.a[jump] = p.op.length;
}

function compileRepeat(p: Program, node: { body: Node; min: number; max: number }): void {
  for (let i = 0; i < node.min; i++) compileNode(p, node.body);
  if (node.max === Infinity) {
    const split = emit(p, Op.Split);
    p.a[split] = split + 1;
    compileNode(p, node.body);
    emit(p, Op.Jump, split);
    p.b[split] = p.op.length;
    return;
  }
  const splits: number[] = [];
  for (let i = node.min; i < node.max; i++) {
    const split = emit(p, Op.Split);
    p.a[split] = split + 1;
    splits.push(split);
    compileNode(p, node.body);
  }
  for (const split of splits) p.b[split] = p.op.length;
}

function compileProgram(node: Node): Program {
  const p: Program = { op: [], test: [], a: [], b: [], looks: [] };
  compileNode(p, node);
  emit(p, Op.Match);
  return p;
}

/**
 * Whether `p` matches a prefix of `text` from `start` (a whole match when `p` ends with `$`). A lookahead
 * runs its own program from the position it is asked at; each state is followed once per position, so
 * the time is the length times the states, times a lookahead's reach (a few characters in what
 * picomatch emits, except under an extglob `!(…)` holding a star, where it may read to the end).
 */
function runProgram(p: Program, text: string, start: number): boolean {
  const n = text.length;
  const size = p.op.length;
  let current = new Int32Array(size);
  let next = new Int32Array(size);
  const seen = new Int32Array(size).fill(-1);
  const stack: number[] = [];
  let count = 0;
  let matched = false;
  // follows the states that consume nothing from `pc` at position `i`, adding the Char states to `list`
  const add = (list: Int32Array, length: number, pc: number, i: number): number => {
    stack.push(pc);
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (seen[s] === i) continue;
      seen[s] = i;
      switch (p.op[s]) {
        case Op.Char:
          list[length++] = s;
          break;
        case Op.Jump:
          stack.push(p.a[s] as number);
          break;
        case Op.Split:
          stack.push(p.b[s] as number, p.a[s] as number);
          break;
        case Op.Start:
          if (i === 0) stack.push(s + 1);
          break;
        case Op.End:
          if (i === n) stack.push(s + 1);
          break;
        case Op.Look:
          if (runProgram(p.looks[p.a[s] as number] as Program, text, i) !== (p.b[s] === 1)) stack.push(s + 1);
          break;
        case Op.Match:
          matched = true;
          break;
      }
    }
    return length;
  };
  count = add(current, 0, 0, start);
  for (let i = start; i < n && count > 0 && !matched; i++) {
    const code = text.charCodeAt(i);
    let nextCount = 0;
    for (let k = 0; k < count; k++) {
      const s = current[k] as number;
      if ((p.test[s] as CodeTest)(code)) nextCount = add(next, nextCount, s + 1, i + 1);
    }
    [current, next] = [next, current];
    count = nextCount;
  }
  return matched;
}

/** A compiled expression: `test(text)` answers as `new RegExp(source, flags).test(text)` does. */
export interface LinearRegex {
  test(text: string): boolean;
}

/**
 * Compiles a regular expression of the glob dialect (no flags, or `s`) for linear-time matching. Throws
 * {@link UnsupportedRegexError} for what it does not implement (other flags, lookbehind, back-references).
 */
export function compileLinearRegex(source: string, flags = ""): LinearRegex {
  if (flags !== "" && flags !== "s") throw new UnsupportedRegexError(`flags \`${flags}\``);
  const root = new Parser(source, flags === "s").parse();
  // not anchored at the start: a match may begin anywhere, as RegExp.prototype.test searches
  const anchored = source.startsWith("^");
  const program = compileProgram(
    anchored ? root : { t: "seq", items: [{ t: "repeat", body: ANY, min: 0, max: Infinity }, root] },
  );
  return {
    test(text: string): boolean {
      return runProgram(program, text, 0);
    },
  };
}

const ANY: Node = { t: "char", test: () => true };
