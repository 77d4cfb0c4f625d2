import { MAX_CANONICAL_DEPTH } from "../canonical-json/index.js";
import type { AuditEventBody, AuditEventInput } from "./event.js";

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

/** Encodings of short strings seen before (tool names, categories, routes repeat on every event). */
const encoded = new Map<string, string>();
const MAX_MEMO_LENGTH = 48;
const MAX_MEMO_ENTRIES = 2048;

/** Printable ASCII but `"` and `\\`: JSON writes such a string as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`;
  if (!isWellFormed(s)) refuse("string holds a lone surrogate (not valid I-JSON)");
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
function namingValue(v: unknown): string {
  return typeof v === "string" ? memoString(v) : jsonValue(v, 0);
}

function jsonValue(v: unknown, depth: number): string {
  switch (typeof v) {
    case "string":
      return jsonString(v);
    case "number":
      // for a finite number JSON.stringify is ToString (RFC 8785 §3.2.2.3), which String() is
      return Number.isFinite(v) ? String(v) : refuse(`number \`${String(v)}\` is not finite`);
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
  const keys = sortedKeys(record);
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
function sortedKeys(record: object): string[] {
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
  const head = `{"agent":${namingValue(b.agent)},"category":${namingValue(b.category)},"decision":${namingValue(b.decision)}`;
  const tail =
    `,"event_type":${namingValue(b.event_type)},"id":${jsonValue(b.id, 0)},"metadata":${jsonValue(b.metadata, 0)}` +
    `,"policy_rule":${namingValue(b.policy_rule)},"previous_event_hash":${jsonValue(b.previous_event_hash, 0)}` +
    `,"request_id":${jsonValue(b.request_id, 0)},"response_time_ms":${jsonValue(b.response_time_ms, 0)}` +
    `,"risk_level":${namingValue(b.risk_level)},"timestamp":${jsonValue(b.timestamp, 0)},"tool":${namingValue(b.tool)}` +
    `,"type":${namingValue(b.type)},"version":${namingValue(b.version)}}`;
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
function timestampValue(v: unknown): string {
  if (v !== lastTimestamp || typeof v !== "string") {
    const out = jsonValue(v, 0);
    if (typeof v !== "string") return out;
    lastTimestamp = v;
    lastTimestampJson = out;
  }
  return lastTimestampJson;
}

/** Length of `{"agent":`, `,"category":` and `,"decision":`. */
const HEAD_KEYS_LENGTH = 33;

/** UTF-8 length of a well-formed string (what `Buffer.byteLength` says, without flattening it). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c < 0xd800 || c > 0xdbff) n += 2;
    else {
      n += 2; // a surrogate pair: two units, four bytes
      i++;
    }
  }
  return n;
}

/** The canonical JSON of an event, less its previous hash and `event_hash`, as {@link auditPartsOf} splits it. */
export interface AuditParts {
  /** `{"agent":…,"category":…,"decision":…,"event_type":…,…,"previous_event_hash":"sha256:` */
  readonly front: string;
  /** UTF-8 bytes of `front` up to where `event_hash` goes (after the `decision` value). */
  readonly hashAt: number;
  /** `","request_id":…,"version":"0.2.0"}` and a newline (or from `,"request_id"` when the previous hash is null). */
  readonly back: string;
}

const NOTHING = Symbol("nothing");

/** Memo of the last head (`{"agent":…,"decision":…`): one producer's events usually share it. */
let headOf: { agent: unknown; category: unknown; decision: unknown; text: string; bytes: number } = {
  agent: NOTHING,
  category: NOTHING,
  decision: NOTHING,
  text: "",
  bytes: 0,
};
/** Memo of the last tail (`,"risk_level":…,"version":"0.2.0"}\n`), likewise. */
let tailOf: { risk: unknown; timestamp: unknown; tool: unknown; text: string } = {
  risk: NOTHING,
  timestamp: NOTHING,
  tool: NOTHING,
  text: "",
};

/** Only strings and null are remembered by value: an object could change between two events. */
const byValue = (v: unknown): boolean => v === null || typeof v === "string";

function headFor(agent: unknown, category: unknown, decision: unknown): typeof headOf {
  const last = headOf;
  if (last.agent === agent && last.category === category && last.decision === decision) return last;
  const a = namingValue(agent);
  const c = namingValue(category);
  const d = namingValue(decision);
  const made = {
    agent,
    category,
    decision,
    text: `{"agent":${a},"category":${c},"decision":${d}`,
    bytes: HEAD_KEYS_LENGTH + utf8Length(a) + utf8Length(c) + utf8Length(d),
  };
  if (byValue(agent) && byValue(category) && byValue(decision)) headOf = made;
  return made;
}

function tailFor(risk: unknown, timestamp: unknown, tool: unknown): string {
  const last = tailOf;
  if (last.risk === risk && last.timestamp === timestamp && last.tool === tool) return last.text;
  const text =
    `,"risk_level":${namingValue(risk)},"timestamp":${timestampValue(timestamp)},"tool":${namingValue(tool)}` +
    `,"type":"audit_event","version":"0.2.0"}\n`;
  if (byValue(risk) && byValue(timestamp) && byValue(tool)) tailOf = { risk, timestamp, tool, text };
  return text;
}

/**
 * The canonical JSON of the event an input and its placement make, split around its previous hash:
 * `front` runs to `"previous_event_hash":"sha256:`, `back` from the quote closing that hash to the end
 * and a newline; `hashAt` is the UTF-8 length of `front` up to where `event_hash` goes. Fields as
 * {@link createAuditEventBody} fills them.
 */
export function auditPartsOf(input: AuditEventInput, id: string, timestamp: string): AuditParts {
  const head = headFor(input.agent ?? null, input.category ?? null, input.decision ?? null);
  const kind = lastOf(typeOf, input.event_type, (v) => `,"event_type":${namingValue(v)},"id":`);
  const rule = lastOf(
    ruleOf,
    input.policy_rule ?? null,
    (v) => `,"policy_rule":${namingValue(v)},"previous_event_hash":"sha256:`,
  );
  const metadata = jsonValue(input.metadata ?? {}, 0);
  // ids and request ids are usually plain ASCII: then written between the quotes of the fixed pieces
  const front = PLAIN.test(id)
    ? `${head.text}${kind}"${id}","metadata":${metadata}${rule}`
    : `${head.text}${kind}${jsonValue(id, 0)},"metadata":${metadata}${rule}`;
  const request = input.request_id ?? null;
  const time = jsonValue(input.response_time_ms ?? null, 0);
  const tail = tailFor(input.risk_level ?? null, timestamp, input.tool ?? null);
  const back =
    typeof request === "string" && PLAIN.test(request)
      ? `","request_id":"${request}","response_time_ms":${time}${tail}`
      : `","request_id":${jsonValue(request, 0)},"response_time_ms":${time}${tail}`;
  return { front, hashAt: head.bytes, back };
}

/** A one-entry memo: the text made for the last value, when it was a string or null. */
interface LastText {
  value: unknown;
  text: string;
}
const typeOf: LastText = { value: NOTHING, text: "" };
const ruleOf: LastText = { value: NOTHING, text: "" };

function lastOf(memo: LastText, value: unknown, make: (v: unknown) => string): string {
  if (memo.value === value) return memo.text;
  const text = make(value);
  if (byValue(value)) {
    memo.value = value;
    memo.text = text;
  }
  return text;
}
