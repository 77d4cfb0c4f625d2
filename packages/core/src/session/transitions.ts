/**
 * Transition rules (cross-tool escalation barriers): `from -> to: deny|ask`, where each end is a category
 * (`read`, `write`, …) or a glob over action names (`calendar.*`, `email.send`). A rule fires for a request
 * matching `to` when the session has already executed a call matching `from`.
 */
import { CATEGORIES, type Category } from "../request/index.js";
import type { Issue, Result } from "../issues/index.js";
import { quoteValue } from "./errors.js";
import { compileActionPatterns, type ActionPatterns } from "./action-name.js";

/** One transition rule as written (plain data; compiled by the session). */
export interface TransitionRule {
  readonly id: string;
  /** A category name or an action glob. */
  readonly from: string;
  readonly to: string;
  /** `deny` refuses, `ask` asks a person. (`confirm` and `require_confirmation` are read as `ask`.) */
  readonly action: "deny" | "ask";
}

/** What a rule end matches: the call's names and its category. */
export interface TransitionEnd {
  (names: readonly string[], category: Category): boolean;
}

/** A rule with both ends compiled. */
export interface CompiledTransitionRule {
  readonly rule: TransitionRule;
  readonly from: TransitionEnd;
  readonly to: TransitionEnd;
}

const ARROW = /\s*(?:->|→)\s*/;
const MAX_RULES = 1000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function bad(path: (string | number)[], message: string, help?: string): Issue {
  return help === undefined
    ? { code: "invalid_transition_rule", path, message }
    : { code: "invalid_transition_rule", path, message, help };
}

/** Reads `"calendar.* -> email.send: deny"` into its parts. */
function fromString(text: string): Record<string, unknown> | undefined {
  const colon = text.lastIndexOf(":");
  if (colon === -1) return undefined;
  const ends = text.slice(0, colon).split(ARROW);
  if (ends.length !== 2) return undefined;
  return { from: ends[0]?.trim(), to: ends[1]?.trim(), action: text.slice(colon + 1).trim() };
}

/** YAML reads `- calendar.* -> email.send: deny` as a one-key mapping; take it as the string form. */
function fromYamlPair(entry: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = Object.keys(entry);
  const only = keys[0];
  if (keys.length === 1 && only !== undefined && ARROW.test(only) && typeof entry[only] === "string") {
    return fromString(`${only}: ${String(entry[only])}`);
  }
  return entry;
}

function readAction(value: unknown, path: (string | number)[], issues: Issue[]): "deny" | "ask" | undefined {
  if (value === "deny" || value === "ask") return value;
  // the APE notes write an asking rule both ways (`read -> write: confirm`, `action: require_confirmation`)
  if (value === "confirm" || value === "require_confirmation") return "ask";
  const help =
    value === "allow"
      ? "a transition rule can only make a call stricter"
      : "expected deny or ask (confirm and require_confirmation mean ask)";
  issues.push(bad([...path, "action"], `transitions[${String(path[1])}]: unknown action ${quoteValue(value)}`, help));
  return undefined;
}

function readEnd(value: unknown, key: string, path: (string | number)[], issues: Issue[]): string | undefined {
  if (typeof value === "string" && value.trim().length > 0 && value.length <= 1024) {
    const compiled = compileActionPatterns([value.trim()], [...path, key]);
    if (compiled.ok) return value.trim();
    issues.push(
      bad([...path, key], `transitions[${String(path[1])}].${key}: ${compiled.issues[0]?.message ?? "bad glob"}`),
    );
    return undefined;
  }
  issues.push(bad([...path, key], `transitions[${String(path[1])}]: \`${key}\` must be a category or an action glob`));
  return undefined;
}

function readRule(entry: unknown, i: number, issues: Issue[]): TransitionRule | undefined {
  const path: (string | number)[] = ["transitions", i];
  const fields = typeof entry === "string" ? fromString(entry) : isPlainObject(entry) ? fromYamlPair(entry) : undefined;
  if (fields === undefined) {
    issues.push(bad(path, `transitions[${i}]: expected \`{from, to, action}\` or \`"from -> to: action"\``));
    return undefined;
  }
  for (const key of Object.keys(fields)) {
    if (!["id", "from", "to", "action"].includes(key))
      issues.push(bad([...path, key], `transitions[${i}]: unknown field ${quoteValue(key)}`));
  }
  const id = fields["id"] ?? `transition-${i + 1}`;
  if (typeof id !== "string" || id.length === 0 || id.length > 128)
    issues.push(bad([...path, "id"], `transitions[${i}]: \`id\` must be a short string`));
  const from = readEnd(fields["from"], "from", path, issues);
  const to = readEnd(fields["to"], "to", path, issues);
  const action = readAction(fields["action"], path, issues);
  if (from === undefined || to === undefined || action === undefined || typeof id !== "string") return undefined;
  return Object.freeze({ id, from, to, action });
}

/**
 * Parses transition rules from a `transitions:` list (or an object holding one), as read from YAML or JSON.
 * Each entry is `{from, to, action, id?}` or the string `"from -> to: action"`. Bad input gives issues.
 */
export function parseTransitionRules(value: unknown): Result<readonly TransitionRule[]> {
  const list = isPlainObject(value) && "transitions" in value ? value["transitions"] : value;
  if (list === undefined || list === null) return { ok: true, value: [] };
  if (!Array.isArray(list)) return { ok: false, issues: [bad(["transitions"], "`transitions` must be a list")] };
  if (list.length > MAX_RULES)
    return { ok: false, issues: [bad(["transitions"], `more than ${MAX_RULES} transition rules`)] };
  const issues: Issue[] = [];
  const rules = list.map((entry, i) => readRule(entry, i, issues));
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: Object.freeze(rules as TransitionRule[]) };
}

function compileEnd(end: string): TransitionEnd {
  if ((CATEGORIES as readonly string[]).includes(end)) return (_names, category) => category === end;
  const compiled = compileActionPatterns([end], []);
  if (!compiled.ok) throw new Error(`invalid transition end \`${end}\``);
  const patterns: ActionPatterns = compiled.value;
  return (names) => patterns.match(names) !== undefined;
}

/** Compiles parsed rules (a category name wins over a glob of the same spelling). */
export function compileTransitionRules(rules: readonly TransitionRule[]): CompiledTransitionRule[] {
  return rules.map((rule) => ({ rule, from: compileEnd(rule.from), to: compileEnd(rule.to) }));
}

/** One earlier call, as transition rules see it. */
export interface TransitionHistoryEntry {
  readonly names: readonly string[];
  readonly category: Category;
}

/** A rule that fires, with the earlier call that triggered it. */
export interface FiredTransition {
  readonly rule: TransitionRule;
  readonly after: string;
}

/** Every rule that fires for a request with these names and category, given the history (deny rules first). */
export function matchTransitions(
  rules: readonly CompiledTransitionRule[],
  history: readonly TransitionHistoryEntry[],
  names: readonly string[],
  category: Category,
): FiredTransition[] {
  const fired: FiredTransition[] = [];
  for (const compiled of rules) {
    if (!compiled.to(names, category)) continue;
    const earlier = history.find((h) => compiled.from(h.names, h.category));
    if (earlier !== undefined) fired.push({ rule: compiled.rule, after: earlier.names[0] ?? "" });
  }
  return byAction(fired);
}

/**
 * {@link matchTransitions} from what a session counted: `after[i]` is the first executed call's name that
 * matched rule `i`'s `from` (undefined while none did), kept as calls are recorded instead of searched for.
 */
export function firedTransitions(
  rules: readonly CompiledTransitionRule[],
  after: readonly (string | undefined)[],
  names: readonly string[],
  category: Category,
): FiredTransition[] {
  const fired: FiredTransition[] = [];
  rules.forEach((compiled, i) => {
    const earlier = after[i];
    if (earlier !== undefined && compiled.to(names, category)) fired.push({ rule: compiled.rule, after: earlier });
  });
  return byAction(fired);
}

/** Deny rules first, each group in rule order. */
function byAction(fired: FiredTransition[]): FiredTransition[] {
  return fired.sort((a, b) => (a.rule.action === b.rule.action ? 0 : a.rule.action === "deny" ? -1 : 1));
}
