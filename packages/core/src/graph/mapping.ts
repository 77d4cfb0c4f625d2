/**
 * The graph mapping (config.yml `graph.mapping`): which tool calls the consent graph judges, as which
 * `domain.action`, with argument-based refinements. First matching entry wins; within an entry, the first
 * matching refinement wins. A call no entry covers is not judged by the graph.
 */
import { compileGlob, type GlobMatcher } from "../glob/index.js";
import type { Issue, Result } from "../issues/index.js";
import { ValidationError } from "../issues/index.js";
import type { ActionRequest, GraphTarget } from "../request/index.js";
import { MAX_RECIPIENTS, UNREADABLE_RECIPIENT, allRecipientsVip, recipientsAt } from "./recipients.js";
import { didYouMean } from "./suggest.js";
import type { ConsentGraph } from "./types.js";
import { GRAPH_NAME_PATTERN, deepFreeze } from "./validate.js";

/** One refinement: exactly one condition, and the action it selects. */
export interface GraphRefinement {
  /** The action when the condition holds. */
  readonly action: string;
  /** Holds when a recipient under these arguments (dotted paths) is not a VIP value, or none is found. */
  readonly recipient_not_vip?: readonly string[];
  /** Holds when at least one recipient is found under these arguments and every one is a VIP value. */
  readonly recipient_vip?: readonly string[];
  /** Holds when these arguments name more than one destination, or one that cannot be read (fan-out). */
  readonly fan_out?: readonly string[];
  /** The argument (dotted path) that `matches` / `not_matches` test. */
  readonly argument?: string;
  /** Holds when the argument is a string matching this glob. */
  readonly matches?: string;
  /** Holds when the argument is missing, not a string, or does not match this glob. */
  readonly not_matches?: string;
}

/** One mapping entry: server/tool globs to a graph coordinate. */
export interface GraphMappingEntry {
  readonly server?: string;
  readonly tool: string;
  readonly domain: string;
  readonly action: string;
  readonly refine?: readonly GraphRefinement[];
}

/** The ordered mapping. */
export type GraphMapping = readonly GraphMappingEntry[];

const ENTRY_KEYS = ["server", "tool", "domain", "action", "refine"];
const REFINE_KEYS = ["action", "recipient_not_vip", "recipient_vip", "fan_out", "argument", "matches", "not_matches"];
const CONDITIONS = ["recipient_not_vip", "recipient_vip", "fan_out", "matches", "not_matches"];
/** Most entries a mapping may hold. */
export const MAX_MAPPING_ENTRIES = 10_000;

type Path = readonly (string | number)[];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkKeys(raw: Record<string, unknown>, known: string[], path: Path, issues: Issue[]): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const help = didYouMean(key, known);
    issues.push({
      code: "unknown_key",
      path: [...path, key],
      message: `unknown key \`${key}\` in the graph mapping`,
      ...(help !== undefined ? { help } : {}),
    });
  }
}

function checkName(value: unknown, path: Path, what: string, issues: Issue[]): void {
  if (typeof value !== "string" || !GRAPH_NAME_PATTERN.test(value)) {
    issues.push({
      code: "invalid_mapping",
      path,
      message: `${what} must be a graph name (letters, digits, \`_\`, \`-\`, \`.\`, \`:\`), not ${JSON.stringify(value)}`,
    });
  }
}

function checkGlob(value: unknown, path: Path, issues: Issue[]): void {
  const compiled = typeof value === "string" ? compileGlob(value) : undefined;
  if (compiled === undefined || !compiled.ok) {
    const why = compiled !== undefined && !compiled.ok ? `: ${compiled.issues[0]?.message ?? ""}` : "";
    issues.push({ code: "invalid_glob", path, message: `\`${path.join(".")}\` must be a glob${why}` });
  }
}

function checkArgumentNames(value: unknown, path: Path, issues: Issue[]): void {
  const names = typeof value === "string" ? [value] : value;
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    !names.every((n) => typeof n === "string" && n.length > 0 && n.length <= 256)
  ) {
    issues.push({ code: "invalid_mapping", path, message: `\`${path.join(".")}\` must be a list of argument names` });
  }
}

function checkRefinement(raw: unknown, path: Path, issues: Issue[]): void {
  if (!isObject(raw)) {
    issues.push({
      code: "invalid_mapping",
      path,
      message: "a refinement must be an object with one condition and an `action`",
    });
    return;
  }
  checkKeys(raw, REFINE_KEYS, path, issues);
  checkName(raw["action"], [...path, "action"], "a refinement's `action`", issues);
  const conditions = CONDITIONS.filter((c) => raw[c] !== undefined);
  if (conditions.length !== 1) {
    const message = `a refinement needs exactly one of \`recipient_not_vip\`, \`recipient_vip\`, \`fan_out\`, \`matches\`, \`not_matches\` (found ${conditions.length})`;
    issues.push({ code: "invalid_mapping", path, message });
    return;
  }
  const condition = conditions[0] ?? "";
  if (condition === "matches" || condition === "not_matches") {
    if (typeof raw["argument"] !== "string" || raw["argument"].length === 0) {
      issues.push({
        code: "invalid_mapping",
        path: [...path, "argument"],
        message: `\`${condition}\` needs the \`argument\` it tests`,
      });
    }
    checkGlob(raw[condition], [...path, condition], issues);
  } else {
    if (raw["argument"] !== undefined)
      issues.push({
        code: "invalid_mapping",
        path: [...path, "argument"],
        message: `\`argument\` goes with \`matches\` / \`not_matches\`; \`${condition}\` lists its own argument names`,
      });
    checkArgumentNames(raw[condition], [...path, condition], issues);
  }
}

function checkEntry(raw: unknown, path: Path, issues: Issue[]): void {
  if (!isObject(raw)) {
    issues.push({
      code: "invalid_mapping",
      path,
      message: "a mapping entry must be an object with `tool`, `domain` and `action`",
    });
    return;
  }
  checkKeys(raw, ENTRY_KEYS, path, issues);
  checkGlob(raw["tool"], [...path, "tool"], issues);
  if (raw["server"] !== undefined) checkGlob(raw["server"], [...path, "server"], issues);
  checkName(raw["domain"], [...path, "domain"], "`domain`", issues);
  checkName(raw["action"], [...path, "action"], "`action`", issues);
  if (raw["refine"] === undefined) return;
  if (!Array.isArray(raw["refine"])) {
    issues.push({
      code: "invalid_mapping",
      path: [...path, "refine"],
      message: "`refine` must be a list of refinements",
    });
    return;
  }
  raw["refine"].forEach((r: unknown, i) => checkRefinement(r, [...path, "refine", i], issues));
}

/** Options for `validateGraphMapping`. */
export interface ValidateGraphMappingOptions {
  /** Where the mapping sits, prefixed to issue paths; default `["graph", "mapping"]`. */
  readonly path?: Path;
}

/**
 * Validates a raw mapping (from config.yml `graph.mapping`) into a deeply frozen `GraphMapping`. Never throws:
 * a raw value whose reading throws (a getter, a revoked proxy) is the issue `invalid_mapping`.
 */
export function validateGraphMapping(raw: unknown, options: ValidateGraphMappingOptions = {}): Result<GraphMapping> {
  const base = options.path ?? ["graph", "mapping"];
  try {
    return validateMapping(raw, base);
  } catch (err) {
    const message = `the graph mapping could not be read: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, issues: [{ code: "invalid_mapping", path: base, message }] };
  }
}

function validateMapping(raw: unknown, base: Path): Result<GraphMapping> {
  const issues: Issue[] = [];
  if (!Array.isArray(raw)) {
    return {
      ok: false,
      issues: [{ code: "invalid_mapping", path: base, message: "the graph mapping must be a list of entries" }],
    };
  }
  if (raw.length > MAX_MAPPING_ENTRIES) {
    return {
      ok: false,
      issues: [
        {
          code: "invalid_mapping",
          path: base,
          message: `the graph mapping has ${raw.length} entries (limit ${MAX_MAPPING_ENTRIES})`,
        },
      ],
    };
  }
  raw.forEach((entry: unknown, i) => checkEntry(entry, [...base, i], issues));
  if (issues.length > 0) return { ok: false, issues };
  const copy = JSON.parse(JSON.stringify(raw)) as GraphMappingEntry[];
  return { ok: true, value: deepFreeze(copy) };
}

const globCache = new WeakMap<object, Map<string, GlobMatcher>>();

function matcher(owner: object, pattern: string): GlobMatcher {
  let byPattern = globCache.get(owner);
  if (byPattern === undefined) {
    byPattern = new Map<string, GlobMatcher>();
    globCache.set(owner, byPattern);
  }
  let compiled = byPattern.get(pattern);
  if (compiled === undefined) {
    const result = compileGlob(pattern);
    if (!result.ok) throw new ValidationError("graph mapping", result.issues);
    compiled = result.value;
    byPattern.set(pattern, compiled);
  }
  return compiled;
}

function argumentAt(args: Readonly<Record<string, unknown>>, path: string): unknown {
  let here: unknown = args;
  for (const part of path.split(".")) {
    if (!isObject(here) || !Object.hasOwn(here, part)) return undefined;
    here = here[part];
  }
  return here;
}

/** The recipients under the named arguments (dotted paths), at most `limit` + 1 of them. */
function recipientsUnder(args: Readonly<Record<string, unknown>>, names: readonly string[] | string, limit: number) {
  const recipients: string[] = [];
  for (const name of typeof names === "string" ? [names] : names) {
    if (recipients.length > limit) break;
    recipients.push(...recipientsAt(argumentAt(args, name), limit - recipients.length));
  }
  return recipients;
}

function refinementHolds(refinement: GraphRefinement, request: ActionRequest, graph: ConsentGraph): boolean {
  const args = request.arguments;
  if (refinement.fan_out !== undefined) {
    const destinations = recipientsUnder(args, refinement.fan_out, 1);
    return destinations.length > 1 || destinations.includes(UNREADABLE_RECIPIENT);
  }
  const names = refinement.recipient_not_vip ?? refinement.recipient_vip;
  if (names !== undefined) {
    const recipients = recipientsUnder(args, names, MAX_RECIPIENTS);
    const allVip = allRecipientsVip(recipients, graph.vip_contacts);
    return refinement.recipient_vip !== undefined ? allVip : !allVip;
  }
  const value = argumentAt(args, refinement.argument ?? "");
  const pattern = refinement.matches ?? refinement.not_matches ?? "";
  const matched = typeof value === "string" && matcher(refinement, pattern)(value);
  return refinement.matches !== undefined ? matched : !matched;
}

/**
 * The graph target of a request: the request's own `graph` when it names one (used as is), else the
 * first mapping entry whose `server` and `tool` globs match, refined by its arguments; null when no entry
 * covers the call (the graph does not judge it). Throws `ValidationError` on an unvalidated, invalid mapping.
 */
export function mapToGraphTarget(
  mapping: GraphMapping | undefined,
  request: ActionRequest,
  graph: ConsentGraph,
): GraphTarget | null {
  if (request.graph !== undefined) return request.graph;
  for (const entry of mapping ?? []) {
    if (!matcher(entry, entry.tool)(request.tool)) continue;
    if (entry.server !== undefined && (request.server === undefined || !matcher(entry, entry.server)(request.server)))
      continue;
    const refined = (entry.refine ?? []).find((r) => refinementHolds(r, request, graph));
    return { domain: entry.domain, action: refined?.action ?? entry.action };
  }
  return null;
}
