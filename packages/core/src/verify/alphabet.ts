/**
 * The actions of the model: every concrete action name the intent, the transition rules, the policy's rules
 * and `classify:` name, a sample name for each glob that no named action matches, and one action nothing names.
 */
import { BUILTIN_CLASSIFICATIONS, DEFAULT_CLASSIFICATION, findBuiltinClassification } from "../classify/index.js";
import { compileGlob, isGlobPattern } from "../glob/index.js";
import type { Policy } from "../policy/index.js";
import { CATEGORIES } from "../request/index.js";
import type { CompiledIntent, SessionSettings } from "../session/index.js";

/** The action no intent or policy names: it stands for every tool the configuration forgot. */
export const OTHER_ACTION = Object.freeze({ server: "other", tool: "other_tool" });

/** A server and a tool. */
export interface ActionName {
  readonly server: string;
  readonly tool: string;
}

/** Most actions in one model; beyond it the model is too large to check. */
export const MAX_MODEL_ACTIONS = 64;

/** A concrete string a glob matches, built by taking the first choice of every wildcard; undefined if none. */
export function sampleGlob(pattern: string): string | undefined {
  if (!isGlobPattern(pattern)) return pattern;
  const sample = pattern
    .replace(/\{([^{},]*)(?:,[^{}]*)?\}/g, "$1")
    .replace(/\[!?\^?([^\]])[^\]]*\]/g, (whole, first: string) =>
      whole.startsWith("[!") || whole.startsWith("[^") ? "x" : first,
    )
    .replace(/\*+/g, "x")
    .replace(/\?/g, "x");
  const matcher = compileGlob(pattern);
  return matcher.ok && matcher.value(sample) ? sample : undefined;
}

function split(name: string): ActionName | undefined {
  const dot = name.indexOf(".");
  if (dot <= 0 || dot === name.length - 1) return undefined;
  return { server: name.slice(0, dot), tool: name.slice(dot + 1) };
}

interface RuleLike {
  readonly tool?: string | undefined;
  readonly server?: string | undefined;
}

function nameGlobs(intent: CompiledIntent, settings: SessionSettings): string[] {
  const i = intent.intent;
  const transitionEnds = settings.transitions
    .flatMap((t) => [t.from, t.to])
    .filter((end) => !(CATEGORIES as readonly string[]).includes(end));
  return [
    ...i.allowed_actions,
    ...i.forbidden_actions,
    ...i.confirm_actions,
    ...Object.keys(i.budgets.per_action ?? {}),
    ...transitionEnds,
  ];
}

/** One tool name per category of the built-in table (`read_x`, `write_x`, `send_x`, …), then `x` (write). */
const CATEGORY_SAMPLES: readonly string[] = (() => {
  const seen = new Set<string>();
  const tools: string[] = [];
  for (const row of BUILTIN_CLASSIFICATIONS) {
    const prefix = row.prefixes[0];
    if (prefix === undefined || seen.has(row.category)) continue;
    seen.add(row.category);
    tools.push(prefix.endsWith("_") ? `${prefix}x` : `${prefix}_x`);
  }
  return tools;
})();

function builtinCategory(name: string): string {
  const tool = split(name)?.tool ?? name;
  return findBuiltinClassification(tool)?.category ?? DEFAULT_CLASSIFICATION.category;
}

/**
 * Sample names for a glob over action names: one per built-in category the glob can reach and no named action
 * already covers (`mail.*` gives `mail.read_x`, `mail.send_x`, …), else the plain sample.
 */
function sampleActionGlob(pattern: string, names: readonly string[], servers: readonly string[]): string[] {
  const matcher = compileGlob(pattern);
  if (!matcher.ok) return [];
  const covered = new Set(names.filter((n) => matcher.value(n)).map(builtinCategory));
  const dot = pattern.indexOf(".");
  const head = dot > 0 ? pattern.slice(0, dot) : undefined;
  const candidates = head !== undefined && !isGlobPattern(head) ? [head] : [...servers, OTHER_ACTION.server];
  const out: string[] = [];
  for (const tool of CATEGORY_SAMPLES) {
    const category = builtinCategory(tool);
    if (covered.has(category)) continue;
    const name = candidates.map((server) => `${server}.${tool}`).find((n) => matcher.value(n));
    if (name !== undefined) {
      covered.add(category);
      out.push(name);
    }
  }
  if (out.length > 0 || covered.size > 0) return out;
  const plain = sampleGlob(pattern);
  return plain === undefined ? [] : [plain];
}

function matchesAny(pattern: string, names: readonly string[]): boolean {
  const matcher = compileGlob(pattern);
  return matcher.ok && names.some((n) => matcher.value(n));
}

/** Servers named literally: by exact action names, by the head of a glob (`mail.*`), by the policy's rules. */
function knownServers(names: readonly string[], globs: readonly string[], policy: Policy): string[] {
  const heads = globs.filter((g) => g.includes(".")).map((g) => g.slice(0, g.indexOf(".")));
  const ruled = policy.rules.map((r) => r.match.server ?? "");
  const all = [...names.map((n) => (split(n) as ActionName).server), ...heads, ...ruled];
  return [...new Set(all.filter((h) => h.length > 0 && !isGlobPattern(h)))];
}

function ruleMatches(rule: RuleLike, action: ActionName): boolean {
  const tool = rule.tool === undefined ? undefined : compileGlob(rule.tool);
  const server = rule.server === undefined ? undefined : compileGlob(rule.server);
  if (tool !== undefined && !(tool.ok && tool.value(action.tool))) return false;
  return server === undefined || (server.ok && server.value(action.server));
}

/**
 * The model's actions, in a stable order (named ones first, then samples, then `other.other_tool`), and the
 * patterns that could not be sampled (a name without a server, a glob no sample matches).
 */
export function collectActions(
  policy: Policy,
  intent: CompiledIntent,
  settings: SessionSettings,
): { actions: ActionName[]; unsampled: string[] } {
  const names: string[] = [];
  const unsampled: string[] = [];
  const add = (name: string, pattern: string): void => {
    if (names.includes(name)) return;
    if (split(name) === undefined) unsampled.push(pattern);
    else names.push(name);
  };
  const globs = nameGlobs(intent, settings);
  for (const pattern of globs) if (!isGlobPattern(pattern)) add(pattern, pattern);
  const servers = knownServers(names, globs, policy);
  for (const pattern of globs) {
    if (!isGlobPattern(pattern)) continue;
    const samples = sampleActionGlob(pattern, names, servers);
    if (samples.length === 0 && !matchesAny(pattern, names)) unsampled.push(pattern);
    for (const sample of samples) add(sample, pattern);
  }
  const rules: RuleLike[] = [
    ...policy.rules.map((r) => r.match).filter((m) => m.tool !== undefined || m.server !== undefined),
    ...policy.classify,
    ...settings.classify,
  ];
  for (const rule of rules) {
    if (names.some((n) => ruleMatches(rule, split(n) as ActionName))) continue;
    const tool = rule.tool === undefined ? "x" : sampleGlob(rule.tool);
    const server = rule.server === undefined ? OTHER_ACTION.server : sampleGlob(rule.server);
    if (tool === undefined || server === undefined) unsampled.push(`${rule.server ?? "*"}.${rule.tool ?? "*"}`);
    else add(`${server}.${tool}`, `${server}.${tool}`);
  }
  add(`${OTHER_ACTION.server}.${OTHER_ACTION.tool}`, "other");
  return { actions: names.map((n) => split(n) as ActionName), unsampled: [...new Set(unsampled)] };
}
