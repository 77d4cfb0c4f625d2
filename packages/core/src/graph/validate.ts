/**
 * Validates a raw consent-graph object (as read from JSON) into the frozen `ConsentGraph` model.
 * Never throws; every problem is an issue with its path (and line/column when positions are known).
 */
import type { Issue, Result } from "../issues/index.js";
import { positionKey, type PositionEntry } from "./json-source.js";
import { didYouMean } from "./suggest.js";
import {
  DECAY_ACTIONS,
  GRAPH_TIERS,
  TRUST_LEVELS,
  type ConsentDecay,
  type ConsentGraph,
  type GraphDomain,
} from "./types.js";

/** Top-level keys that are not domains. */
export const RESERVED_GRAPH_KEYS = ["vip_contacts", "consent_decay", "$schema"] as const;
/** Keys a domain may hold. */
export const DOMAIN_KEYS = [
  "trust_level",
  ...GRAPH_TIERS,
  "trusted_channel_required",
  "cooling_period_hours",
  "undo_window_days",
  "require_diff",
] as const;
const DECAY_KEYS = ["enabled", "review_interval_days", "decay_action"] as const;

/** Domain and action names: a letter or digit, then letters, digits, `_`, `-`, `.`, `:`; at most 128. */
export const GRAPH_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
/** Most actions one list may hold; more is refused as absurd. */
export const MAX_ACTIONS_PER_LIST = 10_000;

type Path = readonly (string | number)[];

/** Collects issues, placing each at its key or value when the source positions are known. */
class IssueSink {
  readonly issues: Issue[] = [];
  constructor(private readonly positions?: ReadonlyMap<string, PositionEntry>) {}

  add(code: string, path: Path, message: string, help?: string, at: "key" | "value" = "value"): void {
    const entry = this.positions?.get(positionKey(path));
    const place = at === "key" ? (entry?.key ?? entry?.value) : entry?.value;
    this.issues.push({
      code,
      path,
      message,
      ...(place !== undefined ? { line: place.line, column: place.column } : {}),
      ...(help !== undefined ? { help } : {}),
    });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(path: Path): string {
  return path.length === 0 ? "the graph" : `\`${path.join(".")}\``;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function readActionList(sink: IssueSink, raw: unknown, path: Path): string[] {
  if (!Array.isArray(raw)) {
    sink.add("invalid_type", path, `${describe(path)} must be a list of action names, not ${typeName(raw)}`);
    return [];
  }
  if (raw.length > MAX_ACTIONS_PER_LIST) {
    sink.add("graph_too_large", path, `${describe(path)} lists ${raw.length} actions (limit ${MAX_ACTIONS_PER_LIST})`);
    return [];
  }
  const out: string[] = [];
  raw.forEach((item: unknown, i) => {
    if (typeof item !== "string") {
      sink.add("invalid_type", [...path, i], `action in ${describe(path)} must be a string, not ${typeName(item)}`);
    } else if (!GRAPH_NAME_PATTERN.test(item)) {
      const message = `invalid action name \`${item.slice(0, 64)}\` in ${describe(path)}`;
      sink.add("invalid_name", [...path, i], message, "use letters, digits, `_`, `-`, `.` or `:`, at most 128");
    } else {
      out.push(item);
    }
  });
  return out;
}

function readNonNegative(sink: IssueSink, raw: unknown, path: Path, max: number): number | undefined {
  if (typeof raw !== "number" || !Number.isFinite(raw) || raw < 0 || raw > max) {
    sink.add("invalid_value", path, `${describe(path)} must be a number from 0 to ${max}, not ${JSON.stringify(raw)}`);
    return undefined;
  }
  return raw;
}

function readUnknownKeys(sink: IssueSink, raw: Record<string, unknown>, path: Path, known: readonly string[]): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    const where = path.length === 0 ? "" : ` in ${describe(path)}`;
    sink.add("unknown_key", [...path, key], `unknown key \`${key}\`${where}`, didYouMean(key, known), "key");
  }
}

function readDomain(sink: IssueSink, raw: unknown, name: string): GraphDomain | undefined {
  const path = [name];
  if (!isPlainObject(raw)) {
    sink.add("invalid_type", path, `domain \`${name}\` must be an object with tier lists, not ${typeName(raw)}`);
    return undefined;
  }
  readUnknownKeys(sink, raw, path, DOMAIN_KEYS);
  const domain: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (raw["trust_level"] !== undefined) {
    const level = raw["trust_level"];
    if (typeof level === "string" && (TRUST_LEVELS as readonly string[]).includes(level)) domain["trust_level"] = level;
    else {
      const help = typeof level === "string" ? didYouMean(level, TRUST_LEVELS) : undefined;
      const message = `unknown trust level ${JSON.stringify(level)} in domain \`${name}\` (expected low, medium or high)`;
      sink.add("invalid_value", [...path, "trust_level"], message, help);
    }
  }
  for (const tier of GRAPH_TIERS) {
    domain[tier] = raw[tier] === undefined ? [] : readActionList(sink, raw[tier], [...path, tier]);
  }
  if (raw["trusted_channel_required"] !== undefined) {
    domain["trusted_channel_required"] = readActionList(sink, raw["trusted_channel_required"], [
      ...path,
      "trusted_channel_required",
    ]);
  }
  const extras = [
    ["cooling_period_hours", 24 * 365],
    ["undo_window_days", 3650],
  ] as const;
  for (const [key, max] of extras) {
    if (raw[key] === undefined) continue;
    const value = readNonNegative(sink, raw[key], [...path, key], max);
    if (value !== undefined) domain[key] = value;
  }
  if (raw["require_diff"] !== undefined) {
    if (typeof raw["require_diff"] === "boolean") domain["require_diff"] = raw["require_diff"];
    else sink.add("invalid_type", [...path, "require_diff"], `\`${name}.require_diff\` must be true or false`);
  }
  return domain as unknown as GraphDomain;
}

function readVipContacts(sink: IssueSink, raw: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (raw === undefined) return out;
  if (!isPlainObject(raw)) {
    sink.add("invalid_type", ["vip_contacts"], `\`vip_contacts\` must be an object of name → phone or address`);
    return out;
  }
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string" && value.trim() !== "") out[name] = value;
    else sink.add("invalid_type", ["vip_contacts", name], `vip contact \`${name}\` must be a non-empty string`);
  }
  return out;
}

function readDecay(sink: IssueSink, raw: unknown): ConsentDecay | undefined {
  const path = ["consent_decay"];
  if (!isPlainObject(raw)) {
    sink.add("invalid_type", path, `\`consent_decay\` must be an object, not ${typeName(raw)}`);
    return undefined;
  }
  readUnknownKeys(sink, raw, path, DECAY_KEYS);
  const enabled = raw["enabled"];
  if (typeof enabled !== "boolean")
    sink.add("invalid_type", [...path, "enabled"], "`consent_decay.enabled` must be true or false");
  const interval = raw["review_interval_days"];
  const intervalOk = typeof interval === "number" && Number.isFinite(interval) && interval > 0 && interval <= 3650;
  if (!intervalOk) {
    const message = `\`consent_decay.review_interval_days\` must be a number of days above 0 and at most 3650, not ${JSON.stringify(interval)}`;
    sink.add(interval === undefined ? "missing_key" : "invalid_value", [...path, "review_interval_days"], message);
  }
  const action = raw["decay_action"] ?? DECAY_ACTIONS[0];
  if (typeof action !== "string" || !(DECAY_ACTIONS as readonly string[]).includes(action)) {
    const message = `unknown decay action ${JSON.stringify(action)} (expected \`downgrade_to_requires_approval\`)`;
    sink.add("invalid_value", [...path, "decay_action"], message);
  }
  if (typeof enabled !== "boolean" || !intervalOk) return undefined;
  return { enabled, review_interval_days: interval, decay_action: DECAY_ACTIONS[0] };
}

const validatedGraphs = new WeakSet<object>();

/** Whether a value is a `ConsentGraph` produced by `validateConsentGraph` / `parseConsentGraph`. */
export function isConsentGraph(value: unknown): value is ConsentGraph {
  return typeof value === "object" && value !== null && validatedGraphs.has(value);
}

/** Freezes a value and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Validates a raw graph object (e.g. from `JSON.parse`) into a deeply frozen `ConsentGraph`.
 * `positions` (from the JSON reader) adds line and column to each issue. Never throws: a raw object whose
 * reading throws (a getter, a revoked proxy) is the issue `graph_error`.
 */
export function validateConsentGraph(
  raw: unknown,
  positions?: ReadonlyMap<string, PositionEntry>,
): Result<ConsentGraph> {
  try {
    return validateRaw(raw, positions);
  } catch (err) {
    const message = `the consent graph could not be read: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, issues: [{ code: "graph_error", path: [], message }] };
  }
}

function validateRaw(raw: unknown, positions?: ReadonlyMap<string, PositionEntry>): Result<ConsentGraph> {
  const sink = new IssueSink(positions);
  if (!isPlainObject(raw)) {
    sink.add("invalid_type", [], `a consent graph must be a JSON object of domains, not ${typeName(raw)}`);
    return { ok: false, issues: sink.issues };
  }
  const domains = Object.create(null) as Record<string, GraphDomain>;
  for (const [key, value] of Object.entries(raw)) {
    if ((RESERVED_GRAPH_KEYS as readonly string[]).includes(key)) continue;
    const near = didYouMean(key, RESERVED_GRAPH_KEYS);
    if (near !== undefined) {
      sink.add("unknown_key", [key], `unknown top-level key \`${key}\``, near, "key");
    } else if (!GRAPH_NAME_PATTERN.test(key)) {
      const message = `invalid domain name \`${key.slice(0, 64)}\``;
      sink.add("invalid_name", [key], message, "use letters, digits, `_`, `-`, `.` or `:`, at most 128", "key");
    } else {
      const domain = readDomain(sink, value, key);
      if (domain !== undefined) domains[key] = domain;
    }
  }
  if (raw["$schema"] !== undefined && typeof raw["$schema"] !== "string") {
    sink.add("invalid_type", ["$schema"], "`$schema` must be a string");
  }
  const vip_contacts = readVipContacts(sink, raw["vip_contacts"]);
  const decay = raw["consent_decay"] === undefined ? undefined : readDecay(sink, raw["consent_decay"]);
  if (sink.issues.length > 0) return { ok: false, issues: sink.issues };
  const graph: ConsentGraph = { domains, vip_contacts, ...(decay !== undefined ? { consent_decay: decay } : {}) };
  validatedGraphs.add(deepFreeze(graph));
  return { ok: true, value: graph };
}
