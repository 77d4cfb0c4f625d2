import { spendWork, workEpoch } from "../glob/index.js";

/**
 * The texts from which a search reads once for every literal ({@link LiteralSearch}); shorter ones are
 * searched literal by literal (`String.prototype.includes`), which costs less than a pass set up for them.
 */
export const SEARCH_ONCE_LENGTH = 256;

/** Most states of the automaton (the literals' characters in all): 8,192, a 2 MiB table; past it, literal by literal. */
const MAX_STATES = 8_192;

/** Texts whose findings one decision keeps (a request with more long strings than this searches again). */
const MAX_REMEMBERED = 64;

/**
 * The work units of one pass of the automaton over `text`: one per 8 characters (a table look-up and a
 * store per character, some 3 ns, about a twentieth of one step of the linear-time matcher; the units are
 * rounded up to leave room).
 */
function passCost(text: string): number {
  return 1 + (text.length >> 3);
}

/** The automaton: ASCII transitions of every state (Aho–Corasick, completed), fail links, literal ends. */
interface Automaton {
  readonly next: Uint16Array;
  /** States in breadth-first order (a state's fail link comes before it). */
  readonly order: Uint16Array;
  readonly fail: Uint16Array;
  /** The state where each literal ends. */
  readonly ends: Uint16Array;
  readonly states: number;
}

/**
 * The ASCII literals every match of a policy's globs must hold (`BEGIN` of `*BEGIN*PRIVATE KEY*`, `rm -rf`
 * of `*rm -rf*`), searched for in a long argument in one pass for them all (an Aho–Corasick automaton over
 * ASCII), whose work is the text's length whatever the literals, instead of one string search per rule
 * and reading (`includes`, whose time on a hostile text such as a megabyte of `a` grows with the
 * literal's length: some 27 ms a megabyte in V8). What one pass found is kept for the decision it is
 * made in ({@link workEpoch}), so twenty rules over one 1,000,000-character `content` read it once.
 * Its work (one unit per 8 characters) counts against the decision's budget.
 */
export class LiteralSearch {
  private readonly literals: string[] = [];
  private readonly ids = new Map<string, number>();
  private size = 1;
  private automaton: Automaton | undefined;
  private epoch = -1;
  private readonly found = new Map<string, Uint8Array>();

  /** The literal's number, or undefined when it is not searched for here (not ASCII, empty, or too many). */
  register(literal: string): number | undefined {
    const known = this.ids.get(literal);
    if (known !== undefined) return known;
    if (literal === "" || this.size + literal.length > MAX_STATES) return undefined;
    for (let i = 0; i < literal.length; i++) if (literal.charCodeAt(i) >= 128) return undefined;
    this.size += literal.length;
    this.ids.set(literal, this.literals.length);
    this.literals.push(literal);
    this.automaton = undefined;
    this.found.clear(); // what was found before did not look for this one
    return this.literals.length - 1;
  }

  /** Whether `text` holds literal `id`: one pass over a long text answers for every literal. */
  has(text: string, id: number): boolean {
    if (text.length < SEARCH_ONCE_LENGTH) {
      spendWork(1 + (text.length >> 1)); // a string search: up to a step a character on a hostile text
      return text.includes(this.literals[id] as string);
    }
    const epoch = workEpoch();
    if (epoch !== this.epoch) {
      this.found.clear();
      this.epoch = epoch;
    }
    let found = this.found.get(text);
    if (found === undefined) {
      found = this.scan(text);
      if (this.found.size < MAX_REMEMBERED) this.found.set(text, found);
    }
    return found[id] === 1;
  }

  /** Which literals `text` holds: 1 at each literal's number. */
  private scan(text: string): Uint8Array {
    spendWork(passCost(text));
    const a = (this.automaton ??= this.build());
    const seen = new Uint8Array(a.states);
    const next = a.next;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      // no literal holds a character past ASCII: the automaton starts over after one
      state = code < 128 ? (next[(state << 7) | code] as number) : 0;
      seen[state] = 1;
    }
    // a state seen means every state on its fail links was seen too (their texts end where it does)
    for (let k = a.states - 1; k > 0; k--) {
      const s = a.order[k] as number;
      if (seen[s] === 1) seen[a.fail[s] as number] = 1;
    }
    const out = new Uint8Array(this.literals.length);
    for (let id = 0; id < out.length; id++) out[id] = seen[a.ends[id] as number] as number;
    return out;
  }

  private build(): Automaton {
    const states = this.size;
    const next = new Uint16Array(states << 7);
    const ends = new Uint16Array(this.literals.length);
    const hasEdge = new Uint8Array(states << 7);
    let count = 1;
    this.literals.forEach((literal, id) => {
      let s = 0;
      for (let i = 0; i < literal.length; i++) {
        const slot = (s << 7) | literal.charCodeAt(i);
        if (hasEdge[slot] === 0) {
          hasEdge[slot] = 1;
          next[slot] = count++;
        }
        s = next[slot] as number;
      }
      ends[id] = s;
    });
    // breadth first: each state's missing transitions are its fail link's (a complete automaton)
    const fail = new Uint16Array(states);
    const order = new Uint16Array(states);
    let head = 0;
    let tail = 1; // order[0] is the root
    for (let c = 0; c < 128; c++) if (hasEdge[c] === 1) order[tail++] = next[c] as number;
    while (++head < tail) {
      const s = order[head] as number;
      for (let c = 0; c < 128; c++) {
        const slot = (s << 7) | c;
        const f = next[((fail[s] as number) << 7) | c] as number;
        if (hasEdge[slot] === 1) {
          const t = next[slot] as number;
          fail[t] = f;
          order[tail++] = t;
        } else next[slot] = f;
      }
    }
    return { next, order, fail, ends, states: count };
  }
}
