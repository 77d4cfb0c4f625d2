import { sha256Ref } from "../canonical-json/sha256.js";
import { isWellFormedString } from "./audit-json.js";
import type { AuditEventInput, AuditMetadata } from "./event.js";
import { isAuditEventType } from "./event-types.js";

/**
 * Deepest nesting kept inside an event's `metadata`; a deeper object or array stands in as a string
 * ({@link omittedNesting}). The chain's canonical form refuses nesting beyond 128 levels: without the cut,
 * one call whose arguments an agent nested 200 deep would make an event nobody can record.
 */
export const MAX_METADATA_DEPTH = 64;

/** The §7.4 fields a front end's `record(eventType, fields)` sets on the event itself; the rest is metadata. */
function isOwnField(key: string): boolean {
  switch (key) {
    case "request_id":
    case "agent":
    case "tool":
    case "category":
    case "risk_level":
    case "decision":
    case "policy_rule":
    case "response_time_ms":
    case "metadata":
      return true;
    default:
      return false;
  }
}

/** A string as I-JSON holds it: a lone surrogate (valid in JSON text, refused by the chain) becomes U+FFFD. */
function wellFormed(value: string): string {
  return isWellFormedString(value) ? value : (value as unknown as { toWellFormed(): string }).toWellFormed();
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? wellFormed(value) : null;
}

/** What stands in the audit for a value nested deeper than {@link MAX_METADATA_DEPTH}: its JSON's length and SHA-256. */
export function omittedNesting(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined; // (too deep even for JSON.stringify, or cyclic)
  }
  const what = `nested deeper than ${MAX_METADATA_DEPTH} levels`;
  return text === undefined
    ? `[omitted from the audit: ${what}]`
    : `[omitted from the audit: ${what}, ${text.length} characters, ${sha256Ref(text)}]`;
}

/**
 * Whether `value` is already what {@link auditJson} would give back (objects of Object's prototype and arrays of
 * well-formed strings, finite numbers other than -0, booleans and null; no undefined, hole, symbol key or
 * `__proto__` key; at most {@link MAX_METADATA_DEPTH} deep), so that the copy can be skipped. The fields of
 * the usual event come from parsed JSON-RPC messages and decisions: they are.
 */
function isAuditJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "string") return isWellFormedString(value);
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (typeof value !== "object" || depth >= MAX_METADATA_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isAuditJson(value[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  if (Object.getOwnPropertySymbols(value).length > 0) return false;
  for (const key of Object.keys(value)) {
    if (key === "__proto__" || !isWellFormedString(key)) return false;
    if (!isAuditJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * A copy of `value` as a JSON round trip gives it (`toJSON` called, undefined, functions and symbols left out
 * of objects and null in arrays, non-finite numbers null, -0 is 0, a cycle or a bigint throws as
 * `JSON.stringify` does), with every string and key well-formed and every object or array deeper than
 * {@link MAX_METADATA_DEPTH} replaced by {@link omittedNesting}.
 */
function auditJson(value: unknown, depth: number, path: Set<object>): unknown {
  let v = value;
  if (typeof v === "object" && v !== null && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON(): unknown }).toJSON();
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "string") return wellFormed(v);
  if (typeof v === "number") return Number.isFinite(v) ? v + 0 : null; // (-0 + 0 is 0)
  if (typeof v === "bigint") throw new TypeError("Do not know how to serialize a BigInt");
  if (typeof v !== "object") return undefined; // undefined, a function, a symbol
  if (path.has(v)) throw new TypeError("Converting circular structure to JSON");
  if (depth >= MAX_METADATA_DEPTH) return omittedNesting(v);
  path.add(v);
  try {
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (let i = 0; i < v.length; i++) out.push(auditJson(v[i], depth + 1, path) ?? null);
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      const child = auditJson((v as Record<string, unknown>)[key], depth + 1, path);
      if (child === undefined) continue;
      // (defined, not assigned: a `__proto__` key stays a key, as JSON.parse makes it)
      Object.defineProperty(out, wellFormed(key), {
        value: child,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } finally {
    path.delete(v);
  }
}

/**
 * Maps a front end's `record(eventType, fields)` onto the §7.4 event input: the event's own fields on top
 * (strings, or null), every other field under `metadata` (with the entries of a `metadata` field), as a JSON
 * round trip of them gives it, and always recordable: a lone surrogate becomes U+FFFD and nesting deeper
 * than {@link MAX_METADATA_DEPTH} is cut ({@link omittedNesting}), so no argument an agent sends can make an
 * event the chain refuses. Plain JSON metadata is taken as it is (the writer stages the event when it is
 * appended, so later changes to the caller's objects do not reach the log). Throws on an unknown event type,
 * and on metadata a JSON round trip refuses (a cycle, a bigint).
 */
export function auditEventInput(eventType: string, fields: Readonly<Record<string, unknown>>): AuditEventInput {
  if (!isAuditEventType(eventType)) throw new Error(`unknown audit event type \`${eventType}\``);
  const metadata: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (isOwnField(key) || value === undefined) continue;
    // assigned (about three times quicker than defining, the same own property), but `__proto__`: assigning it
    // would set the prototype, so that one is defined, a key as JSON.parse makes it
    if (key === "__proto__") {
      Object.defineProperty(metadata, key, { value, enumerable: true, writable: true, configurable: true });
    } else metadata[key] = value;
  }
  const extra = fields["metadata"];
  if (typeof extra === "object" && extra !== null) Object.assign(metadata, extra);
  const responseTime = fields["response_time_ms"];
  return {
    event_type: eventType,
    request_id: stringOrNull(fields["request_id"]),
    agent: stringOrNull(fields["agent"]),
    tool: stringOrNull(fields["tool"]),
    category: stringOrNull(fields["category"]),
    risk_level: stringOrNull(fields["risk_level"]),
    decision: stringOrNull(fields["decision"]),
    policy_rule: stringOrNull(fields["policy_rule"]),
    response_time_ms: typeof responseTime === "number" && Number.isFinite(responseTime) ? responseTime : null,
    metadata: (isAuditJson(metadata, 0) ? metadata : auditJson(metadata, 0, new Set())) as AuditMetadata,
  };
}
