/**
 * Regular expressions a person writes (`redaction.values`), run in time linear in the text: the Pike VM of
 * {@link compileLinearRegex}, here also reporting where each match is, with V8's choice of match
 * (leftmost, then the way a backtracking engine tries first: alternatives in order, greedy or lazy
 * quantifiers). What cannot run in linear time — backreferences, lookahead and lookbehind — is refused
 * when the pattern is compiled, with where it stands; so is a repetition of something that can match
 * nothing (`(a*)*`), whose match this machine could report otherwise than V8.
 */
import { Op, assertionHolds, compileProgram, type Program } from "./linear-regex.js";
import { Parser, UnsupportedRegexError, type CodeTest, type Node } from "./regex-parse.js";
import { spendWork } from "./work-budget.js";

/** A compiled pattern: `source` and `flags` as given (`g` implied), matched in linear time. */
export interface LinearPattern {
  readonly source: string;
  readonly flags: string;
  /** Whether the pattern matches anywhere in `text`. */
  test(text: string): boolean;
  /**
   * `text` with every match replaced by `replace(match)`, as `text.replace(/source/gflags, replace)`
   * gives it (an empty match moves one code unit on).
   */
  replaceAll(text: string, replace: (match: string) => string): string;
}

/** Flags a pattern may carry: `i`, `m`, `s`; `g` and `d` change nothing here. */
const FLAGS = /^[gimsd]*$/;

/** The longest run of plain literals every match holds (searched for before the machine runs). */
export function requiredText(node: Node): string {
  if (node.t === "char") return node.code === undefined ? "" : String.fromCharCode(node.code);
  if (node.t === "repeat") return node.min > 0 ? requiredText(node.body) : "";
  if (node.t !== "seq") return "";
  let best = "";
  let run = "";
  for (const item of node.items) {
    if (item.t === "char" && item.code !== undefined) {
      run += String.fromCharCode(item.code);
      continue;
    }
    if (item.t === "start" || item.t === "end" || item.t === "boundary") continue; // zero width
    if (run.length > best.length) best = run;
    run = "";
    const inner = requiredText(item);
    if (inner.length > best.length) best = inner;
  }
  return run.length > best.length ? run : best;
}

/** Whether `node` can match the empty string. */
function canBeEmpty(node: Node): boolean {
  switch (node.t) {
    case "char":
      return false;
    case "seq":
      return node.items.every(canBeEmpty);
    case "alt":
      return node.options.some(canBeEmpty);
    case "repeat":
      return node.min === 0 || canBeEmpty(node.body);
    default:
      return true;
  }
}

/**
 * The first optional repetition (`?`, `*`, `+`, `{n,m}` past n) of something that can match nothing
 * (`(a*)*`, `(a?)+`, `(a*?)?`): ECMAScript refuses an empty repetition and backtracks into it, which a
 * machine that runs every way at once does not follow, so the match it reports could differ from V8's.
 */
function emptyRepetition(node: Node): (Node & { t: "repeat" }) | undefined {
  switch (node.t) {
    case "seq":
      for (const item of node.items) {
        const found = emptyRepetition(item);
        if (found !== undefined) return found;
      }
      return undefined;
    case "alt":
      for (const option of node.options) {
        const found = emptyRepetition(option);
        if (found !== undefined) return found;
      }
      return undefined;
    case "repeat":
      return node.max > node.min && canBeEmpty(node.body) ? node : emptyRepetition(node.body);
    default:
      return undefined;
  }
}

/** The literal text every match starts with (`acct_` of `acct_[a-z0-9]+`), or "". */
function leadingText(node: Node): string {
  if (node.t === "char") return node.code === undefined ? "" : String.fromCharCode(node.code);
  if (node.t !== "seq") return "";
  let out = "";
  for (const item of node.items) {
    if (item.t !== "char" || item.code === undefined) break;
    out += String.fromCharCode(item.code);
  }
  return out;
}

function hasLook(node: Node): boolean {
  switch (node.t) {
    case "look":
      return true;
    case "seq":
      return node.items.some(hasLook);
    case "alt":
      return node.options.some(hasLook);
    case "repeat":
      return hasLook(node.body);
    default:
      return false;
  }
}

/**
 * Compiles `source` with `flags` for linear-time search. Throws {@link UnsupportedRegexError} (with
 * `index`, the position in `source`) for a flag other than `g i m s d`, a backreference, a lookaround, an
 * escape it does not know (`\p{…}`, which needs `u`) or an expression too large.
 */
export function compileLinearPattern(source: string, flags = ""): LinearPattern {
  if (!FLAGS.test(flags)) {
    const bad = [...flags].find((f) => !"gimsd".includes(f)) ?? flags;
    throw new UnsupportedRegexError(`flag \`${bad}\` (expected g, i, m, s or d)`);
  }
  const root = new Parser(source, {
    dotAll: flags.includes("s"),
    ignoreCase: flags.includes("i"),
    multiline: flags.includes("m"),
    lookahead: false,
  }).parse();
  if (hasLook(root)) throw new UnsupportedRegexError("lookaround");
  const empty = emptyRepetition(root);
  if (empty !== undefined) {
    throw new UnsupportedRegexError(
      "a repetition of something that can match nothing (as `(a*)*` or `(a?)+`)",
      empty.at,
    );
  }
  const program = compileProgram(root);
  const required = requiredText(root);
  const search = createSearch(program, leadingText(root));
  return {
    source,
    flags,
    test: (text) => (required === "" || text.includes(required)) && search(text, 0) !== undefined,
    replaceAll(text, replace) {
      if (required !== "" && !text.includes(required)) return text;
      let out = "";
      let kept = 0;
      let from = 0;
      while (from <= text.length) {
        const found = search(text, from);
        if (found === undefined) break;
        const [start, end] = found;
        out += text.slice(kept, start) + replace(text.slice(start, end));
        kept = end;
        from = end === start ? end + 1 : end;
      }
      return kept === 0 && from === 0 ? text : out + text.slice(kept);
    },
  };
}

/**
 * The leftmost match at or after `from` that a backtracking engine would report, as [start, end), or
 * undefined. A Pike VM whose threads carry their start and run in priority order: a thread reaching
 * Match cuts the threads after it, and a new thread starts at each position until a match is found.
 */
function createSearch(
  p: Program,
  leading: string,
): (text: string, from: number) => readonly [number, number] | undefined {
  const size = p.op.length;
  let current = new Int32Array(size);
  let next = new Int32Array(size);
  let currentStarts = new Int32Array(size);
  let nextStarts = new Int32Array(size);
  const seen = new Float64Array(size);
  const stack: number[] = [];
  let stamp = 0;
  let matchStart = -1;
  let matchEnd = -1;

  /**
   * Adds the closure of `pc` at `i` (a thread started at `start`) to `list` from `length` on, in priority
   * order; returns the new length, or `-1 - length` when the closure reached Match (recorded).
   */
  const follow = (
    text: string,
    list: Int32Array,
    starts: Int32Array,
    length: number,
    pc: number,
    i: number,
    start: number,
  ): number => {
    stack.length = 0;
    stack.push(pc);
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (seen[s] === stamp) continue;
      seen[s] = stamp;
      const op = p.op[s];
      if (op === Op.Char) {
        list[length] = s;
        starts[length++] = start;
      } else if (op === Op.Jump) stack.push(p.a[s] as number);
      else if (op === Op.Split) stack.push(p.b[s] as number, p.a[s] as number);
      else if (op === Op.Match) {
        // a match: the states still on the stack come after it, and are cut
        matchStart = start;
        matchEnd = i;
        stack.length = 0;
        return -1 - length;
      } else if (assertionHolds(op as 3 | 4 | 7, p.a[s] as number, text, i)) stack.push(s + 1);
    }
    return length;
  };

  /** The threads of a match starting at `i` (its closure), the count (a match reached is recorded). */
  const seed = (text: string, i: number): number => {
    stamp++;
    const count = follow(text, current, currentStarts, 0, 0, i, i);
    return count < 0 ? -1 - count : count;
  };

  return (text, from) => {
    matchStart = -1;
    // a match starts with the leading text: the machine starts only where it stands (a string search)
    if (leading !== "") from = text.indexOf(leading, from);
    if (from < 0) return undefined;
    let count = seed(text, from);
    for (let i = from; i < text.length; i++) {
      if (count === 0) {
        if (matchStart >= 0) break;
        if (leading !== "") {
          const next = text.indexOf(leading, i + 1);
          if (next < 0) break;
          i = next;
          count = seed(text, i);
        }
      }
      spendWork(count + 1);
      const code = text.charCodeAt(i);
      stamp++;
      let nextCount = 0;
      let cut = false;
      for (let k = 0; k < count && !cut; k++) {
        const s = current[k] as number;
        if (!(p.test[s] as CodeTest)(code)) continue;
        const added = follow(text, next, nextStarts, nextCount, s + 1, i + 1, currentStarts[k] as number);
        cut = added < 0;
        nextCount = cut ? -1 - added : added;
      }
      // a new thread at the next position, last in priority, while nothing matched yet
      if (!cut && matchStart < 0) {
        const added = follow(text, next, nextStarts, nextCount, 0, i + 1, i + 1);
        nextCount = added < 0 ? -1 - added : added;
      }
      [current, next] = [next, current];
      [currentStarts, nextStarts] = [nextStarts, currentStarts];
      count = nextCount;
    }
    return matchStart < 0 ? undefined : [matchStart, matchEnd];
  };
}
