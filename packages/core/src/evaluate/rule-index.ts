import { isGlobPattern } from "../glob/index.js";
import type { Category } from "../request/index.js";

/** What the index needs to know about one rule. */
export interface IndexableRule {
  readonly index: number;
  readonly tool?: string | undefined;
  readonly server?: string | undefined;
  readonly category?: Category | undefined;
}

/**
 * The rule index. Every rule sits in exactly one bucket, chosen by its most selective literal:
 * its exact tool name; else the literal prefix or suffix of its tool glob (whichever is longer); else, for
 * rules without a usable tool literal, its category or its exact server; else the wildcard list. Each
 * bucket lists rule positions in file order. A request's candidates are the buckets its tool name, category
 * and server can reach; the first match is the lowest position that fully matches in any of them.
 */
export interface RuleIndex {
  readonly exact: ReadonlyMap<string, readonly number[]>;
  /** Literal prefixes of tool globs, as a trie walked along the tool name (no string slicing). */
  readonly prefix: TrieNode;
  /** Literal suffixes of tool globs, as a trie walked backwards from the end of the tool name. */
  readonly suffix: TrieNode;
  readonly category: ReadonlyMap<string, readonly number[]>;
  readonly server: ReadonlyMap<string, readonly number[]>;
  readonly wildcard: readonly number[];
}

/** A trie node keyed by UTF-16 code unit; `rules` holds the positions whose literal ends here. */
export interface TrieNode {
  children: Map<number, TrieNode> | undefined;
  rules: number[] | undefined;
}

function createNode(): TrieNode {
  return { children: undefined, rules: undefined };
}

function insert(root: TrieNode, key: string, reverse: boolean, position: number): void {
  let node = root;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(reverse ? key.length - 1 - i : i);
    node.children ??= new Map();
    let next = node.children.get(code);
    if (next === undefined) {
      next = createNode();
      node.children.set(code, next);
    }
    node = next;
  }
  (node.rules ??= []).push(position);
}

/** Characters that are literal in every glob position; the prefix/suffix scan stops at anything else. */
const LITERAL = /[A-Za-z0-9_-]/;

/** The longest leading run of plain characters of a glob (empty for `*_email`, `./x*`, `!x*`). */
export function literalPrefix(pattern: string): string {
  let end = 0;
  while (end < pattern.length && LITERAL.test(pattern[end] as string)) end++;
  return pattern.slice(0, end);
}

/** The longest trailing run of plain characters of a glob (empty for `send_*`, `*.{js,ts}`). */
export function literalSuffix(pattern: string): string {
  let start = pattern.length;
  while (start > 0 && LITERAL.test(pattern[start - 1] as string)) start--;
  return pattern.slice(start);
}

function push(map: Map<string, number[]>, key: string, index: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [index]);
  else list.push(index);
}

/** Builds the index. `rules` must be in file order (positions ascending), so every bucket is sorted. */
export function buildRuleIndex(rules: readonly IndexableRule[]): RuleIndex {
  const exact = new Map<string, number[]>();
  const prefix = createNode();
  const suffix = createNode();
  const category = new Map<string, number[]>();
  const server = new Map<string, number[]>();
  const wildcard: number[] = [];
  for (const rule of rules) {
    const tool = rule.tool;
    if (tool !== undefined && !isGlobPattern(tool)) {
      push(exact, tool, rule.index);
      continue;
    }
    const pre = tool === undefined ? "" : literalPrefix(tool);
    const suf = tool === undefined ? "" : literalSuffix(tool);
    if (pre.length > 0 && pre.length >= suf.length) insert(prefix, pre, false, rule.index);
    else if (suf.length > 0) insert(suffix, suf, true, rule.index);
    else if (rule.category !== undefined) push(category, rule.category, rule.index);
    else if (rule.server !== undefined && !isGlobPattern(rule.server)) push(server, rule.server, rule.index);
    else wildcard.push(rule.index);
  }
  return { exact, prefix, suffix, category, server, wildcard };
}

/**
 * Finds the lowest rule position that passes `test`, looking only at the buckets the request reaches.
 * Each bucket is scanned in order and abandoned as soon as its positions pass the best found so far, so
 * the answer is exactly the first match of a linear scan over all rules.
 */
export function findFirstMatch(
  index: RuleIndex,
  tool: string,
  category: Category,
  server: string | undefined,
  test: (position: number) => boolean,
): number {
  let best = Number.POSITIVE_INFINITY;
  const scan = (list: readonly number[] | undefined): void => {
    if (list === undefined) return;
    for (const position of list) {
      if (position >= best) return;
      if (test(position)) {
        best = position;
        return;
      }
    }
  };
  scan(index.exact.get(tool));
  let node: TrieNode | undefined = index.prefix;
  for (let i = 0; i < tool.length && node.children !== undefined; i++) {
    node = node.children.get(tool.charCodeAt(i));
    if (node === undefined) break;
    scan(node.rules);
  }
  node = index.suffix;
  for (let i = tool.length - 1; i >= 0 && node.children !== undefined; i--) {
    node = node.children.get(tool.charCodeAt(i));
    if (node === undefined) break;
    scan(node.rules);
  }
  scan(index.category.get(category));
  if (server !== undefined) scan(index.server.get(server));
  scan(index.wildcard);
  return best === Number.POSITIVE_INFINITY ? -1 : best;
}
