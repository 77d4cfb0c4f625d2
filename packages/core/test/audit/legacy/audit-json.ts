// The audit writer's code path as it was before 26 Nov 2026 (commit 37746fa), kept only for
// record-equivalence.test.ts, which holds the current code to the same bytes and hashes. Not used by ACP.
import { MAX_CANONICAL_DEPTH } from "../../../src/canonical-json/index.js";
import type { AuditEventBody } from "../../../src/audit/event.js";

// The audit writer's fast path to RFC 8785. For valid I-JSON, JCS is JSON.stringify with object keys
// sorted by UTF-16 code units (Array.prototype.sort's default order): strings and numbers are written
// exactly as ECMAScript's JSON.stringify writes them. This walks once, refusing what canonicalJson
// refuses (non-finite numbers, lone surrogates, undefined, non-plain objects, nesting beyond the cap).
// A property test holds it equal to canonicalJson, including on the inputs both must refuse.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** `String.prototype.isWellFormed` (ES2024, in Node 20) when present: far faster than the regex. */
export const isWellFormedString: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** Refuses a value RFC 8785 cannot write, with the TypeError every fast path throws. */
export function refuseNonJson(what: string): never {
  throw new TypeError(`cannot canonicalize: ${what}`);
}

/** Encodings of short strings seen before (tool names, categories, routes repeat on every event). */
const encoded = new Map<string, string>();
const MAX_MEMO_LENGTH = 48;
const MAX_MEMO_ENTRIES = 2048;

/** Printable ASCII but `"` and `\\`: JSON writes such a string as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  if (!isWellFormedString(s)) refuseNonJson("string holds a lone surrogate (not valid I-JSON)");
  return JSON.stringify(s);
}

/** {@link jsonString} remembered, for short strings that repeat (field values that name things, object keys). */
function memoString(s: string): string {
  if (s.length > MAX_MEMO_LENGTH) return jsonString(s);
  let out = encoded.get(s);
  if (out === undefined) {
    out = jsonString(s);
    if (encoded.size >= MAX_MEMO_ENTRIES) encoded.clear();
    encoded.set(s, out);
  }
  return out;
}

/** A top-level field that names something (repeats across events): remembered when a short string. */
export function namingValueOf(v: unknown): string {
  return typeof v === "string" ? memoString(v) : jsonValue(v, 0);
}

function jsonValue(v: unknown, depth: number): string {
  switch (typeof v) {
    case "string":
      return jsonString(v);
    case "number":
      // for a finite number JSON.stringify is ToString (RFC 8785 §3.2.2.3), which String() is
      return Number.isFinite(v) ? String(v) : refuseNonJson(`number \`${String(v)}\` is not finite`);
    case "boolean":
      return v ? "true" : "false";
    case "object":
      return v === null ? "null" : jsonComposite(v, depth + 1);
    default:
      return refuseNonJson(`a ${typeof v} is not a JSON value`);
  }
}

function jsonComposite(v: object, depth: number): string {
  if (depth > MAX_CANONICAL_DEPTH) refuseNonJson(`nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i === 0 ? "" : ",") + jsonValue(v[i], depth);
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) refuseNonJson("only plain objects are JSON objects");
  const record = v as Record<string, unknown>;
  const keys = sortedKeysOf(record);
  if (keys.length === 0) return "{}";
  let out = `{${memberName(keys[0] as string, firstNames)}${jsonValue(record[keys[0] as string], depth)}`;
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    out += memberName(key, nextNames) + jsonValue(record[key], depth);
  }
  return `${out}}`;
}

/** `"key":` (first member) and `,"key":` (the others) of keys seen before, whole: fewer pieces per object. */
const firstNames = new Map<string, string>();
const nextNames = new Map<string, string>();

function memberName(key: string, names: Map<string, string>): string {
  let out = names.get(key);
  if (out === undefined) {
    out = `${names === nextNames ? "," : ""}${jsonString(key)}:`;
    if (key.length <= MAX_MEMO_LENGTH) {
      if (names.size >= MAX_MEMO_ENTRIES) names.clear();
      names.set(key, out);
    }
  }
  return out;
}

/**
 * An object's own keys in UTF-16 code-unit order (what `Array.prototype.sort` does by default, and what
 * RFC 8785 asks for). Small objects, the usual case, are sorted in place by insertion, without the
 * scratch storage the built-in sort allocates.
 */
export function sortedKeysOf(record: object): string[] {
  const keys = Object.keys(record);
  if (keys.length > 12) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/** RFC 8785 canonical JSON of any value, the fast way; throws a TypeError where canonicalJson would throw. */
export function fastCanonicalJson(value: unknown): string {
  return jsonValue(value, 0);
}

const BODY_KEYS = 15;

/** The canonical JSON of a body split where `event_hash` goes (between `decision` and `event_type`). */
export interface CanonicalAuditParts {
  /** `{"agent":…,"category":…,"decision":…` */
  readonly head: string;
  /** `,"event_type":…}` to the end. */
  readonly tail: string;
}

/** The two parts of an audit body's canonical JSON, from the fixed sorted §7.4 key order; no key check. */
export function auditBodyParts(b: AuditEventBody): CanonicalAuditParts {
  const head = `{"agent":${namingValueOf(b.agent)},"category":${namingValueOf(b.category)},"decision":${namingValueOf(b.decision)}`;
  const tail =
    `,"event_type":${namingValueOf(b.event_type)},"id":${jsonValue(b.id, 0)},"metadata":${jsonValue(b.metadata, 0)}` +
    `,"policy_rule":${namingValueOf(b.policy_rule)},"previous_event_hash":${jsonValue(b.previous_event_hash, 0)}` +
    `,"request_id":${jsonValue(b.request_id, 0)},"response_time_ms":${jsonValue(b.response_time_ms, 0)}` +
    `,"risk_level":${namingValueOf(b.risk_level)},"timestamp":${jsonValue(b.timestamp, 0)},"tool":${namingValueOf(b.tool)}` +
    `,"type":${namingValueOf(b.type)},"version":${namingValueOf(b.version)}}`;
  return { head, tail };
}

/**
 * The canonical JSON of an audit event body (without `event_hash`) split around where `event_hash`
 * goes. Returns `undefined` for a body with other keys than the 15 of §7.4 (the caller falls back to
 * the general path).
 */
export function canonicalAuditBody(b: AuditEventBody): CanonicalAuditParts | undefined {
  let n = 0;
  for (const key in b) if (Object.hasOwn(b, key)) n++;
  return n === BODY_KEYS ? auditBodyParts(b) : undefined;
}

let lastTimestamp = "";
let lastTimestampJson = '""';

/** A timestamp's encoding; events appended together share one, so the last is remembered. */
export function timestampValueOf(v: unknown): string {
  if (v !== lastTimestamp || typeof v !== "string") {
    const out = jsonValue(v, 0);
    if (typeof v !== "string") return out;
    lastTimestamp = v;
    lastTimestampJson = out;
  }
  return lastTimestampJson;
}
