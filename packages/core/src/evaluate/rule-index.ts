import { isGlobPattern, measureWork, spendWork, type GlobMatcher } from "../glob/index.js";
import { foldName, type Category } from "../request/index.js";

/** What the index needs to know about one rule. */
export interface IndexableRule {
  readonly index: number;
  readonly tool?: string | undefined;
  /**
   * An ask or deny rule's folded tool pattern, when it differs from `tool` (compilePolicy's `widenName`):
   * the rule is also filed under it, since its matcher also meets the folded name.
   */
  readonly foldedTool?: string | undefined;
  /** The rule's compiled tool pattern (undefined when the rule has no `tool`). */
  readonly toolMatcher?: GlobMatcher | undefined;
  readonly server?: string | undefined;
  /** An ask or deny rule's folded server pattern, when it differs from `server` (filed under it too). */
  readonly foldedServer?: string | undefined;
  readonly serverMatcher?: GlobMatcher | undefined;
  readonly category?: Category | undefined;
  /** No `args` and no time window: once tool, server and category hold, the rule matches. */
  readonly unconditional: boolean;
}

/** A trie node keyed by UTF-16 code unit; `rules` holds the positions whose literal ends here. */
export interface TrieNode {
  children: Map<number, TrieNode> | undefined;
  rules: number[] | undefined;
}

/**
 * The rule index. Every rule sits in exactly one bucket, chosen by its most selective literal: its exact
 * tool name; else the literal prefix or suffix of its tool glob (whichever is longer, in a trie); else,
 * for rules without a usable tool literal, its category or its exact server; else the wildcard list.
 * Buckets list rule positions in file order. An ask or deny rule whose folded tool pattern differs from its
 * pattern also sits in the bucket of the folded pattern, which the folded name is looked up in.
 *
 * Tool, server and category are static criteria: whether they hold depends only on the request's
 * (tool, server, category) triple. So the candidates of a triple are worked out once and cached
 * ({@link staticCandidates}): the positions its buckets reach, merged in file order, filtered to those
 * whose static criteria all hold, and cut after the first rule without argument or time conditions (it
 * always matches, so nothing after it can win). A request then only tests arguments and time windows of
 * that list, in order; the first that passes is exactly what a linear scan over all rules gives.
 */
export interface RuleIndex {
  readonly exact: ReadonlyMap<string, readonly number[]>;
  readonly prefix: TrieNode;
  readonly suffix: TrieNode;
  readonly category: ReadonlyMap<string, readonly number[]>;
  readonly server: ReadonlyMap<string, readonly number[]>;
  readonly wildcard: readonly number[];
  /** The rules' static criteria, by position, for building cached candidate lists. */
  readonly rules: readonly IndexableRule[];
  /** (category, server, tool) → candidate positions and their cost (see {@link staticCandidates}); filled lazily. */
  readonly cache: Map<string, CachedCandidates>;
}

/** One triple's candidate positions, and the work units finding them took (drawn again on every hit). */
export interface CachedCandidates {
  readonly list: readonly number[];
  readonly units: number;
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
  const byLiteral = (tool: string, position: number): boolean => {
    if (!isGlobPattern(tool)) {
      push(exact, tool, position);
      return true;
    }
    const pre = literalPrefix(tool);
    const suf = literalSuffix(tool);
    if (pre.length > 0 && pre.length >= suf.length) insert(prefix, pre, false, position);
    else if (suf.length > 0) insert(suffix, suf, true, position);
    else return false;
    return true;
  };
  for (const rule of rules) {
    const tool = rule.tool;
    // a rule filed by its folded pattern too is met by the folded name (looked up in collectCandidates)
    if (rule.foldedTool !== undefined && !byLiteral(rule.foldedTool, rule.index)) wildcard.push(rule.index);
    if (tool !== undefined && byLiteral(tool, rule.index)) continue;
    if (rule.category !== undefined) push(category, rule.category, rule.index);
    else if (rule.server !== undefined && !isGlobPattern(rule.server)) {
      push(server, rule.server, rule.index);
      const folded = rule.foldedServer;
      if (folded !== undefined && !isGlobPattern(folded)) push(server, folded, rule.index);
      else if (folded !== undefined && wildcard.at(-1) !== rule.index) wildcard.push(rule.index);
    } else if (wildcard.at(-1) !== rule.index) wildcard.push(rule.index);
  }
  return { exact, prefix, suffix, category, server, wildcard, rules, cache: new Map() };
}

/** Most (category, server, tool) triples whose candidate lists are kept; then the cache starts over. */
export const CANDIDATE_CACHE_LIMIT = 16_384;

const EMPTY: readonly number[] = Object.freeze([]);

function walk(root: TrieNode, tool: string, reverse: boolean, lists: (readonly number[])[]): void {
  let node: TrieNode | undefined = root;
  for (let i = 0; i < tool.length && node.children !== undefined; i++) {
    node = node.children.get(tool.charCodeAt(reverse ? tool.length - 1 - i : i));
    if (node === undefined) return;
    if (node.rules !== undefined) lists.push(node.rules);
  }
}

function staticMatch(rule: IndexableRule, tool: string, category: Category, server: string | undefined): boolean {
  if (rule.toolMatcher !== undefined && !rule.toolMatcher(tool)) return false;
  if (rule.serverMatcher !== undefined && (server === undefined || !rule.serverMatcher(server))) return false;
  return rule.category === undefined || rule.category === category;
}

function collectCandidates(index: RuleIndex, tool: string, category: Category, server: string | undefined): number[] {
  const lists: (readonly number[])[] = [];
  // ask and deny rules' tool patterns also meet the name in lower case and folded (compilePolicy's
  // widenName): look those up too; the rules' own matchers sort out which of them hold
  const lower = tool.toLowerCase();
  const folded = foldName(tool);
  const names = [tool];
  if (lower !== tool) names.push(lower);
  if (folded !== tool && folded !== lower) names.push(folded);
  for (const name of names) {
    const exact = index.exact.get(name);
    if (exact !== undefined) lists.push(exact);
    walk(index.prefix, name, false, lists);
    walk(index.suffix, name, true, lists);
  }
  const byCategory = index.category.get(category);
  if (byCategory !== undefined) lists.push(byCategory);
  if (server !== undefined) {
    // an ask or deny rule's server also meets the name in lower case and folded, as its tool does
    const lowerServer = server.toLowerCase();
    const foldedServer = foldName(server);
    for (const name of new Set([server, lowerServer, foldedServer])) {
      const byServer = index.server.get(name);
      if (byServer !== undefined) lists.push(byServer);
    }
  }
  if (index.wildcard.length > 0) lists.push(index.wildcard);
  const out: number[] = [];
  let previous = -1;
  for (const position of lists.flat().sort((a, b) => a - b)) {
    if (position === previous) continue; // reached by both spellings of the name
    previous = position;
    const rule = index.rules[position] as IndexableRule;
    if (!staticMatch(rule, tool, category, server)) continue;
    out.push(position);
    if (rule.unconditional) break;
  }
  return out;
}

/**
 * The positions whose tool, server and category criteria hold for this triple, in file order, ending at
 * the first unconditional one — from the per-policy cache, since agents call few distinct tools on few
 * servers. The cache is cleared when it holds {@link CANDIDATE_CACHE_LIMIT} triples, so a stream of
 * made-up names costs time, never unbounded memory. A hit draws from the decision's work budget the units
 * the miss drew (the rules' tool and server globs run over the names): the cache saves time, never budget,
 * so whether a request is too costly to judge does not depend on which requests came before it.
 */
export function staticCandidates(
  index: RuleIndex,
  tool: string,
  category: Category,
  server: string | undefined,
): readonly number[] {
  // Unambiguous for any characters: the server is length-prefixed, and categories are fixed words.
  const key = server === undefined ? `${category}:-:${tool}` : `${category}:${server.length}:${server}:${tool}`;
  const cached = index.cache.get(key);
  if (cached !== undefined) {
    if (cached.units > 0) spendWork(cached.units);
    return cached.list;
  }
  let units = 0;
  const found = measureWork(
    () => collectCandidates(index, tool, category, server),
    (spent) => (units = spent),
  );
  const list = found.length === 0 ? EMPTY : found;
  if (index.cache.size >= CANDIDATE_CACHE_LIMIT) index.cache.clear();
  index.cache.set(key, { list, units });
  return list;
}

/**
 * Finds the lowest rule position that matches: the first of the static candidates whose argument and
 * time conditions pass `testDynamic`. Returns -1 when none does.
 */
export function findFirstMatch(
  index: RuleIndex,
  tool: string,
  category: Category,
  server: string | undefined,
  testDynamic: (position: number) => boolean,
): number {
  const list = staticCandidates(index, tool, category, server);
  for (let k = 0; k < list.length; k++) {
    const position = list[k] as number;
    if (testDynamic(position)) return position;
  }
  return -1;
}
