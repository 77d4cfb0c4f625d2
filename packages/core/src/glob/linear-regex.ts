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

import { LINE_TERMINATORS, Parser, UnsupportedRegexError, isWord, type CodeTest, type Node } from "./regex-parse.js";
import { spendWork } from "./work-budget.js";

export { UnsupportedRegexError } from "./regex-parse.js";

/** Most states of one compiled expression (picomatch's stay in the hundreds for a 1,024-character glob). */
const MAX_STATES = 100_000;

/** The operations of a compiled expression (numbers, shared with the search in linear-search.ts). */
export const Op = {
  Char: 0,
  Split: 1,
  Jump: 2,
  Start: 3,
  End: 4,
  Look: 5,
  Match: 6,
  /** `\b` (a: 0) or `\B` (a: 1). */
  Boundary: 7,
} as const;
type OpCode = (typeof Op)[keyof typeof Op];

/** One compiled expression (or lookahead body): parallel arrays indexed by state. */
export interface Program {
  readonly op: OpCode[];
  /** Char: the test; Look: the lookahead's program index in `looks`. */
  readonly test: (CodeTest | undefined)[];
  /**
   * Jump/Split: targets (a first: the preferred one); Look: whether it is negative (1); Start/End: multiline
   * (1); Char: whether it is a class (1) rather than one literal code unit.
   */
  readonly a: number[];
  readonly b: number[];
  readonly looks: Program[];
}

/** Whether an assertion (`^`, `$`, `\b`, `\B`) holds at position `i` of `text`. */
export function assertionHolds(op: OpCode, flag: number, text: string, i: number): boolean {
  if (op === Op.Start) return i === 0 || (flag === 1 && LINE_TERMINATORS.has(text.charCodeAt(i - 1)));
  if (op === Op.End) return i === text.length || (flag === 1 && LINE_TERMINATORS.has(text.charCodeAt(i)));
  const before = i > 0 && isWord(text.charCodeAt(i - 1));
  const after = i < text.length && isWord(text.charCodeAt(i));
  return (before !== after) === (flag === 0);
}

function emit(p: Program, op: OpCode, a = 0, b = 0, test?: CodeTest): number {
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
      // b: 1 for a class (`.`, `[…]`, what a glob's `?` and `[…]` become), which may also take a reading unit
      emit(p, Op.Char, 0, node.code === undefined ? 1 : 0, node.test);
      return;
    case "start":
      emit(p, Op.Start, node.multiline ? 1 : 0);
      return;
    case "end":
      emit(p, Op.End, node.multiline ? 1 : 0);
      return;
    case "boundary":
      emit(p, Op.Boundary, node.negate ? 1 : 0);
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

/** Points a split at its two ways: into the body and past it, the body first unless the repeat is lazy. */
function aim(p: Program, split: number, body: number, past: number, lazy: boolean): void {
  p.a[split] = lazy ? past : body;
  p.b[split] = lazy ? body : past;
}

function compileRepeat(p: Program, node: { body: Node; min: number; max: number; lazy: boolean }): void {
  for (let i = 0; i < node.min; i++) compileNode(p, node.body);
  if (node.max === Infinity) {
    const split = emit(p, Op.Split);
    compileNode(p, node.body);
    emit(p, Op.Jump, split);
    aim(p, split, split + 1, p.op.length, node.lazy);
    return;
  }
  const splits: number[] = [];
  for (let i = node.min; i < node.max; i++) {
    splits.push(emit(p, Op.Split));
    compileNode(p, node.body);
  }
  for (const split of splits) aim(p, split, split + 1, p.op.length, node.lazy);
}

/** Compiles a parsed expression into a program ending in Match. */
export function compileProgram(node: Node): Program {
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
  const run = scratchOf(p);
  run.matched = false;
  let current = run.current;
  let next = run.next;
  let count = follow(p, run, text, current, 0, 0, start, ++stamps);
  for (let i = start; i < text.length && count > 0 && !run.matched; i++) {
    spendWork(count); // each live thread over this character: a decision's work budget counts it
    const code = text.charCodeAt(i);
    const stamp = ++stamps;
    let nextCount = 0;
    for (let k = 0; k < count; k++) {
      const s = current[k] as number;
      if ((p.test[s] as CodeTest)(code)) nextCount = follow(p, run, text, next, nextCount, s + 1, i + 1, stamp);
    }
    [current, next] = [next, current];
    count = nextCount;
  }
  return run.matched;
}

/** One program's working arrays, made once: a program is never run inside a run of itself. */
interface Scratch {
  readonly current: Int32Array;
  readonly next: Int32Array;
  /** The stamp of the step that last followed each state (a state is followed once per step). */
  readonly seen: Float64Array;
  readonly stack: number[];
  matched: boolean;
}

/** Stamps steps of every run apart (a double counts exactly far beyond any run's steps). */
let stamps = 0;
const scratches = new WeakMap<Program, Scratch>();

function scratchOf(p: Program): Scratch {
  let run = scratches.get(p);
  if (run === undefined) {
    const size = p.op.length;
    run = {
      current: new Int32Array(size),
      next: new Int32Array(size),
      seen: new Float64Array(size),
      stack: [],
      matched: false,
    };
    scratches.set(p, run);
  }
  return run;
}

/**
 * Follows the states that consume nothing from `pc` at position `i`, adding the Char states to `list`
 * from `length` on; returns the new length. Reaching Match sets `run.matched`.
 */
function follow(
  p: Program,
  run: Scratch,
  text: string,
  list: Int32Array,
  length: number,
  pc: number,
  i: number,
  stamp: number,
): number {
  const { seen, stack } = run;
  stack.length = 0; // a run a spent work budget stopped inside a lookahead may have left states here
  stack.push(pc);
  while (stack.length > 0) {
    const s = stack.pop() as number;
    if (seen[s] === stamp) continue;
    seen[s] = stamp;
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
      case Op.End:
      case Op.Boundary:
        if (assertionHolds(p.op[s], p.a[s] as number, text, i)) stack.push(s + 1);
        break;
      case Op.Look:
        if (runProgram(p.looks[p.a[s] as number] as Program, text, i) !== (p.b[s] === 1)) stack.push(s + 1);
        break;
      case Op.Match:
        run.matched = true;
        break;
    }
  }
  return length;
}

/**
 * A text with its reading units: runs of code units a person reads as one character (the two code units of
 * `rn` that a folded `m` became, the `ae` of a folded `æ`, a surrogate pair, or one code unit that other
 * characters read the same as: the `o` of a folded `0`). A class of the expression (what a glob's `?` or
 * `[…]` becomes) takes a whole unit when it accepts one of the unit's `codes`, as well as each code unit alone.
 */
export interface ReadingText {
  readonly text: string;
  /**
   * For each position: the units of several code units that start there, each with its end and the code
   * units a class is tried on (`m` for `rn`).
   */
  readonly units: readonly (readonly ReadingUnit[] | undefined)[];
  /** For a position whose one code unit is read as others too: those a class is also tried on (`0` for `o`). */
  readonly alternatives: readonly (readonly number[] | undefined)[];
}

/** One unit of several code units: where it ends, and what a class is tried on. */
export interface ReadingUnit {
  readonly end: number;
  readonly codes: readonly number[];
}

/**
 * Whether `p` matches `r.text` when each class may also take a whole reading unit ({@link ReadingText}): the
 * machine of {@link runProgram}, where a thread taking a unit waits at the unit's end, followed there with
 * the threads that reached it one code unit at a time. Linear still: each state is followed once per position.
 */
function runOverReadings(p: Program, r: ReadingText): boolean {
  const { text, units, alternatives } = r;
  const run = scratchOf(p);
  run.matched = false;
  let current = run.current;
  let next = run.next;
  let stamp = ++stamps;
  let count = follow(p, run, text, current, 0, 0, 0, stamp);
  const waiting: (number[] | undefined)[] = [];
  let lastWaiting = -1;
  for (let i = 0; !run.matched; i++) {
    const held = waiting[i];
    if (held !== undefined) for (const pc of held) count = follow(p, run, text, current, count, pc, i, stamp);
    if (run.matched || i >= text.length || (count === 0 && lastWaiting <= i)) break;
    spendWork(count);
    const code = text.charCodeAt(i);
    const starting = units[i];
    const others = alternatives[i];
    const nextStamp = ++stamps;
    let nextCount = 0;
    for (let k = 0; k < count; k++) {
      const s = current[k] as number;
      const test = p.test[s] as CodeTest;
      if (test(code)) nextCount = follow(p, run, text, next, nextCount, s + 1, i + 1, nextStamp);
      else if (others !== undefined && p.b[s] === 1 && others.some(test)) {
        nextCount = follow(p, run, text, next, nextCount, s + 1, i + 1, nextStamp);
      }
      if (starting === undefined || p.b[s] !== 1) continue;
      for (const { end, codes } of starting) {
        if (!codes.some(test)) continue;
        (waiting[end] ??= []).push(s + 1);
        if (end > lastWaiting) lastWaiting = end;
      }
    }
    [current, next] = [next, current];
    count = nextCount;
    stamp = nextStamp;
  }
  return run.matched;
}

/**
 * Compiles a regular expression of the glob dialect, like {@link compileLinearRegex}, to be run over a
 * text with reading units ({@link ReadingText}).
 */
export function compileReadingRegex(source: string, flags = ""): (r: ReadingText) => boolean {
  if (flags !== "" && flags !== "s") throw new UnsupportedRegexError(`flags \`${flags}\``);
  const root = new Parser(source, flags === "s").parse();
  const anchored = source.startsWith("^");
  const program = compileProgram(
    anchored ? root : { t: "seq", items: [{ t: "repeat", body: ANY, min: 0, max: Infinity, lazy: true }, root] },
  );
  return (r) => runOverReadings(program, r);
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
    anchored ? root : { t: "seq", items: [{ t: "repeat", body: ANY, min: 0, max: Infinity, lazy: true }, root] },
  );
  return {
    test(text: string): boolean {
      return runProgram(program, text, 0);
    },
  };
}

const ANY: Node = { t: "char", test: () => true };
