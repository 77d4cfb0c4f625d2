import { MAX_CANONICAL_DEPTH } from "../canonical-json/index.js";
import type { AuditEventBody } from "./event.js";

// The audit writer's fast path to RFC 8785. For valid I-JSON, JCS is JSON.stringify with object keys
// sorted by UTF-16 code units (Array.prototype.sort's default order): strings and numbers are written
// exactly as ECMAScript's JSON.stringify writes them. This walks once, refusing what canonicalJson
// refuses (non-finite numbers, lone surrogates, undefined, non-plain objects, nesting beyond the cap).
// A property test holds it equal to canonicalJson, including on the inputs both must refuse.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** `String.prototype.isWellFormed` (ES2024, in Node 20) when present: far faster than the regex. */
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

function refuse(what: string): never {
  throw new TypeError(`cannot canonicalize: ${what}`);
}

function jsonString(s: string): string {
  if (!isWellFormed(s)) refuse("string holds a lone surrogate (not valid I-JSON)");
  return JSON.stringify(s);
}

function jsonValue(v: unknown, depth: number): string {
  switch (typeof v) {
    case "string":
      return jsonString(v);
    case "number":
      return Number.isFinite(v) ? JSON.stringify(v) : refuse(`number \`${String(v)}\` is not finite`);
    case "boolean":
      return v ? "true" : "false";
    case "object":
      return v === null ? "null" : jsonComposite(v, depth + 1);
    default:
      return refuse(`a ${typeof v} is not a JSON value`);
  }
}

function jsonComposite(v: object, depth: number): string {
  if (depth > MAX_CANONICAL_DEPTH) refuse(`nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) out += (i === 0 ? "" : ",") + jsonValue(v[i], depth);
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) refuse("only plain objects are JSON objects");
  const record = v as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? "" : ","}${jsonString(key)}:${jsonValue(record[key], depth)}`;
  }
  return `${out}}`;
}

/** RFC 8785 canonical JSON of any value, the fast way; throws a TypeError where canonicalJson would throw. */
export function fastCanonicalJson(value: unknown): string {
  return jsonValue(value, 0);
}

const BODY_KEYS = 15;

/**
 * The canonical JSON of an audit event body (without `event_hash`) and the writer of the full line
 * around a given hash, built from the fixed, sorted §7.4 key order. Returns `undefined` for a body
 * with other keys than the 15 of §7.4 (the caller falls back to the general path).
 */
export function canonicalAuditBody(
  b: AuditEventBody,
): { body: string; line: (eventHash: string) => string } | undefined {
  if (Object.keys(b).length !== BODY_KEYS) return undefined;
  const head = `{"agent":${jsonValue(b.agent, 0)},"category":${jsonValue(b.category, 0)},"decision":${jsonValue(b.decision, 0)}`;
  const tail =
    `,"event_type":${jsonValue(b.event_type, 0)},"id":${jsonValue(b.id, 0)},"metadata":${jsonValue(b.metadata, 0)}` +
    `,"policy_rule":${jsonValue(b.policy_rule, 0)},"previous_event_hash":${jsonValue(b.previous_event_hash, 0)}` +
    `,"request_id":${jsonValue(b.request_id, 0)},"response_time_ms":${jsonValue(b.response_time_ms, 0)}` +
    `,"risk_level":${jsonValue(b.risk_level, 0)},"timestamp":${jsonValue(b.timestamp, 0)},"tool":${jsonValue(b.tool, 0)}` +
    `,"type":${jsonValue(b.type, 0)},"version":${jsonValue(b.version, 0)}}`;
  return { body: head + tail, line: (eventHash) => `${head},"event_hash":${JSON.stringify(eventHash)}${tail}` };
}
