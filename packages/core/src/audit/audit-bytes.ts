import { MAX_CANONICAL_DEPTH, SHA256_PREFIX } from "../canonical-json/index.js";
import { isWellFormedString, refuseNonJson, sortedKeysOf } from "./audit-json.js";
import type { AuditEventInput } from "./event.js";

// RFC 8785 canonical JSON written straight into an arena as UTF-8 bytes, for the audit writer's staged
// lines (`audit-line.ts`). The string path (`audit-json.ts`) builds a string of many pieces that the
// buffer write then flattens and encodes; this writes each piece where it goes: pieces that repeat
// from event to event (the head; the event type; the policy rule with the previous-hash slot and the
// `request_id` key; response time and risk level; the tool and the constant end) are kept as bytes for
// the last few values they were made for, and copied; a piece not kept is written in place, value by
// value (no string is built for it). Short plain-ASCII strings (ids, names, most metadata) are copied
// code unit by code unit while checking they need no escape, anything else takes `JSON.stringify`'s
// escaping as before. Property tests hold the staged-and-sealed bytes equal to
// `serializeAuditEvent(sealAuditEvent(…))`, and to the code this replaced (record-equivalence.test.ts).

/** Thrown (this one error) when a line does not fit in what is left of the arena; the stager retries in a new one. */
export const ARENA_FULL = new RangeError("the line does not fit in the arena");

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
/** Longest string copied unit by unit; a longer one is tested by one regex and written natively. */
const SHORT = 64;
/** Printable ASCII but `"` and `\\`: JSON writes such a string as it is, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

const ascii = (text: string): Buffer => Buffer.from(text, "latin1");
const NULL = ascii("null");
const TRUE = ascii("true");
const FALSE = ascii("false");
const METADATA_KEY = ascii(`,"metadata":`);
/** Closes the previous-hash slot and opens `request_id`. */
const REQUEST_KEY = ascii(`","request_id":`);
const TIME_KEY = ascii(`,"response_time_ms":`);
/** Bytes of `"sha256:` that end the rule piece: the previous-hash slot begins at its quote. */
export const PREVIOUS_OPEN_BYTES = SHA256_PREFIX.length + 1;

/** `Buffer`'s own encoders (what `buffer.write` wraps with argument juggling); that wrapper where missing. */
interface StringWriters {
  utf8Write(text: string, offset: number): number;
  latin1Write(text: string, offset: number): number;
}
const own = Buffer.prototype as unknown as Partial<StringWriters>;
const direct = typeof own.utf8Write === "function" && typeof own.latin1Write === "function";
export const writeUtf8: (buffer: Buffer, text: string, offset: number) => number = direct
  ? (buffer, text, offset) => (buffer as unknown as StringWriters).utf8Write(text, offset)
  : (buffer, text, offset) => buffer.write(text, offset, "utf8");
export const writeLatin1: (buffer: Buffer, text: string, offset: number) => number = direct
  ? (buffer, text, offset) => (buffer as unknown as StringWriters).latin1Write(text, offset)
  : (buffer, text, offset) => buffer.write(text, offset, "latin1");

/** A cursor over an arena: writes canonical JSON at `pos`, throwing {@link ARENA_FULL} past `end`. */
export class JsonBytes {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;
  end = 0;

  /** Copies bytes made before (a remembered piece). */
  bytes(piece: Uint8Array): void {
    const n = piece.length;
    const pos = this.pos;
    if (pos + n > this.end) throw ARENA_FULL;
    this.buf.set(piece, pos);
    this.pos = pos + n;
  }

  /** Leaves `n` bytes to be filled later. */
  skip(n: number): void {
    if (this.pos + n > this.end) throw ARENA_FULL;
    this.pos += n;
  }

  private byte(c: number): void {
    if (this.pos >= this.end) throw ARENA_FULL;
    this.buf[this.pos++] = c;
  }

  /** A string known to be ASCII and to need no escape (a number's digits). */
  private ascii(text: string): void {
    const n = text.length;
    const pos = this.pos;
    if (pos + n > this.end) throw ARENA_FULL;
    const buf = this.buf;
    for (let i = 0; i < n; i++) buf[pos + i] = text.charCodeAt(i);
    this.pos = pos + n;
  }

  /** The next id of a source that writes ids as bytes, between quotes. */
  idBytes(ids: AuditIdBytes): void {
    const n = ids.length;
    const pos = this.pos;
    if (pos + n + 2 > this.end) throw ARENA_FULL;
    const buf = this.buf;
    buf[pos] = QUOTE;
    ids.writeNext(buf, pos + 1);
    buf[pos + 1 + n] = QUOTE;
    this.pos = pos + n + 2;
  }

  /** A JSON string: RFC 8785 writes it as `JSON.stringify` does; a lone surrogate is refused. */
  string(text: string): void {
    const n = text.length;
    const pos = this.pos;
    if (pos + n + 2 > this.end) throw ARENA_FULL;
    const buf = this.buf;
    if (n <= SHORT) {
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) break;
        buf[pos + 1 + i] = c;
      }
      if (i === n) {
        buf[pos] = QUOTE;
        buf[pos + 1 + n] = QUOTE;
        this.pos = pos + n + 2;
        return;
      }
    } else if (PLAIN.test(text)) {
      buf[pos] = QUOTE;
      writeLatin1(buf, text, pos + 1);
      buf[pos + 1 + n] = QUOTE;
      this.pos = pos + n + 2;
      return;
    }
    if (!isWellFormedString(text)) refuseNonJson("string holds a lone surrogate (not valid I-JSON)");
    const json = JSON.stringify(text);
    if (pos + json.length * 3 > this.end) throw ARENA_FULL;
    this.pos = pos + writeUtf8(buf, json, pos);
  }

  /** Any JSON value, as `fastCanonicalJson` writes it, refusing what it refuses. */
  value(v: unknown, depth: number): void {
    switch (typeof v) {
      case "string":
        return this.string(v);
      case "number":
        // for a finite number JSON.stringify is ToString (RFC 8785 §3.2.2.3), which String() is
        return Number.isFinite(v) ? this.ascii(String(v)) : refuseNonJson(`number \`${String(v)}\` is not finite`);
      case "boolean":
        return this.bytes(v ? TRUE : FALSE);
      case "object":
        return v === null ? this.bytes(NULL) : this.composite(v, depth + 1);
      default:
        return refuseNonJson(`a ${typeof v} is not a JSON value`);
    }
  }

  private composite(v: object, depth: number): void {
    if (depth > MAX_CANONICAL_DEPTH) refuseNonJson(`nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
    if (Array.isArray(v)) {
      this.byte(0x5b);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.byte(COMMA);
        this.value(v[i], depth);
      }
      return this.byte(0x5d);
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) refuseNonJson("only plain objects are JSON objects");
    const record = v as Record<string, unknown>;
    const keys = sortedKeysOf(record);
    this.byte(0x7b);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (i > 0) this.byte(COMMA);
      this.string(key);
      this.byte(COLON);
      this.value(record[key], depth);
    }
    this.byte(0x7d);
  }
}

const NOTHING = Symbol("nothing");
/** Only strings, numbers and null are remembered by value: an object could change between two events. */
const byValue = (v: unknown): boolean => v === null || typeof v === "string" || typeof v === "number";
/** A copy of bytes just written to the arena, to be remembered. */
const copyOf = (out: JsonBytes, from: number): Uint8Array => Uint8Array.prototype.slice.call(out.buf, from, out.pos);

/** Entries of a {@link PieceMemo} (a power of two). */
const MEMO_SLOTS = 8;

/**
 * The bytes of a line's piece for the last few keys it was made for (up to three field values each),
 * replaced round robin. A producer's events take turns between a few shapes (`acp proxy` writes four
 * event types per call, with other heads, rules and tails): a one-entry memo missed on most of them.
 */
class PieceMemo {
  private readonly a: unknown[] = new Array<unknown>(MEMO_SLOTS).fill(NOTHING);
  private readonly b: unknown[] = new Array<unknown>(MEMO_SLOTS).fill(NOTHING);
  private readonly c: unknown[] = new Array<unknown>(MEMO_SLOTS).fill(NOTHING);
  private readonly pieces: Uint8Array[] = new Array<Uint8Array>(MEMO_SLOTS).fill(new Uint8Array(0));
  private next = 0;
  private last = 0;

  find(a: unknown, b: unknown, c: unknown): Uint8Array | undefined {
    let i = this.last;
    if (this.a[i] === a && this.b[i] === b && this.c[i] === c) return this.pieces[i];
    for (i = 0; i < MEMO_SLOTS; i++) {
      if (this.a[i] === a && this.b[i] === b && this.c[i] === c) {
        this.last = i;
        return this.pieces[i];
      }
    }
    return undefined;
  }

  /** Remembers the piece for a key of values (strings, numbers, null); keys holding anything else are not kept. */
  keep(a: unknown, b: unknown, c: unknown, piece: Uint8Array): void {
    if (!byValue(a) || !byValue(b) || !byValue(c)) return;
    const i = this.next;
    this.next = (i + 1) & (MEMO_SLOTS - 1);
    this.a[i] = a;
    this.b[i] = b;
    this.c[i] = c;
    this.pieces[i] = piece;
    this.last = i;
  }
}

const AGENT_KEY = ascii(`{"agent":`);
const CATEGORY_KEY = ascii(`,"category":`);
const DECISION_KEY = ascii(`,"decision":`);
const EVENT_TYPE_KEY = ascii(`,"event_type":`);
const ID_KEY = ascii(`,"id":`);
const RULE_KEY = ascii(`,"policy_rule":`);
/** `,"previous_event_hash":"sha256:` */
const PREVIOUS_KEY = ascii(`,"previous_event_hash":"${SHA256_PREFIX}`);
const RISK_KEY = ascii(`,"risk_level":`);
const TIMESTAMP_KEY = ascii(`,"timestamp":`);
const TOOL_KEY = ascii(`,"tool":`);
const END = ascii(`,"type":"audit_event","version":"0.2.0"}\n`);
/** From the previous-hash slot's quote to the end of the rule piece: `"sha256:`, 64 hex digits, `","request_id":`. */
const SLOT_TO_REQUEST = PREVIOUS_OPEN_BYTES + 64 + REQUEST_KEY.length;

/** `{"agent":…,"category":…,"decision":…` */
const heads = new PieceMemo();
/** `,"policy_rule":…,"previous_event_hash":"sha256:<64 bytes>","request_id":` */
const rules = new PieceMemo();
/** `,"response_time_ms":…,"risk_level":…,"timestamp":` */
const times = new PieceMemo();
/** `,"tool":…,"type":"audit_event","version":"0.2.0"}` and the newline. */
const tools = new PieceMemo();
/** `,"event_type":…,"id":` for each event type seen (a short list). */
const kinds = new Map<unknown, Uint8Array>();
const MAX_KINDS = 256;

function writeHead(out: JsonBytes, agent: unknown, category: unknown, decision: unknown): void {
  const known = heads.find(agent, category, decision);
  if (known !== undefined) return out.bytes(known);
  const from = out.pos;
  out.bytes(AGENT_KEY);
  out.value(agent, 0);
  out.bytes(CATEGORY_KEY);
  out.value(category, 0);
  out.bytes(DECISION_KEY);
  out.value(decision, 0);
  heads.keep(agent, category, decision, copyOf(out, from));
}

function writeKind(out: JsonBytes, type: unknown): void {
  const known = kinds.get(type);
  if (known !== undefined) return out.bytes(known);
  const from = out.pos;
  out.bytes(EVENT_TYPE_KEY);
  out.value(type, 0);
  out.bytes(ID_KEY);
  if (typeof type === "string") {
    if (kinds.size >= MAX_KINDS) kinds.clear();
    kinds.set(type, copyOf(out, from));
  }
}

/** The rule piece, through `"request_id":`, with 64 bytes left for the previous hash's hex digits. */
function writeRule(out: JsonBytes, rule: unknown): void {
  const known = rules.find(rule, null, null);
  if (known !== undefined) return out.bytes(known);
  const from = out.pos;
  out.bytes(RULE_KEY);
  out.value(rule, 0);
  out.bytes(PREVIOUS_KEY);
  out.skip(64);
  // the free bytes are sealed over; what the memo keeps of them is not left to the arena's old contents
  out.buf.fill(0x30, out.pos - 64, out.pos);
  out.bytes(REQUEST_KEY);
  rules.keep(rule, null, null, copyOf(out, from));
}

function writeTimes(out: JsonBytes, responseTime: unknown, risk: unknown): void {
  const known = times.find(responseTime, risk, null);
  if (known !== undefined) return out.bytes(known);
  const from = out.pos;
  out.bytes(TIME_KEY);
  out.value(responseTime, 0);
  out.bytes(RISK_KEY);
  out.value(risk, 0);
  out.bytes(TIMESTAMP_KEY);
  times.keep(responseTime, risk, null, copyOf(out, from));
}

/** The last timestamp written and its bytes: the events of one call, or of one millisecond, share it. */
let lastTimestamp: unknown = NOTHING;
let lastTimestampBytes: Uint8Array = new Uint8Array(0);

function writeTimestamp(out: JsonBytes, timestamp: unknown): void {
  if (timestamp === lastTimestamp) return out.bytes(lastTimestampBytes);
  const from = out.pos;
  out.value(timestamp, 0);
  if (typeof timestamp === "string") {
    lastTimestamp = timestamp;
    lastTimestampBytes = copyOf(out, from);
  }
}

function writeTool(out: JsonBytes, tool: unknown): void {
  const known = tools.find(tool, null, null);
  if (known !== undefined) return out.bytes(known);
  const from = out.pos;
  out.bytes(TOOL_KEY);
  out.value(tool, 0);
  out.bytes(END);
  tools.keep(tool, null, null, copyOf(out, from));
}

/**
 * A source of event ids that writes each straight into the arena instead of making a string (the
 * writer's `appendMany` path, where no event object needs the id). `writeNext` writes exactly
 * `length` bytes of printable ASCII with no `"` and no `\\` (so they are their own JSON string body).
 */
export interface AuditIdBytes {
  readonly length: number;
  writeNext(into: Uint8Array, at: number): void;
}

/** Where {@link writeAuditBody} put the two places sealing fills. */
export interface AuditBodyPlaces {
  /** End of `{"agent":…,"decision":…`, where `event_hash` goes. */
  headEnd: number;
  /** Start of the previous-hash slot: `"sha256:` and 64 bytes left for the hex digits. */
  slot: number;
  /** Where the id's opening quote is. */
  id: number;
}

/**
 * Writes at `out.pos` the canonical JSON of the event an input and its placement make, less its
 * previous hash and `event_hash`, and a newline: `{"agent":…,"decision":…` (`places.headEnd`),
 * `,"event_type":…,"previous_event_hash":"sha256:` then 64 bytes left free (`places.slot` at the
 * quote), then `","request_id":…}` and `\n`. Fields as {@link createAuditEventBody} fills them.
 */
export function writeAuditBody(
  out: JsonBytes,
  input: AuditEventInput,
  id: string | AuditIdBytes,
  timestamp: string,
  places: AuditBodyPlaces,
): void {
  writeHead(out, input.agent ?? null, input.category ?? null, input.decision ?? null);
  places.headEnd = out.pos;
  writeKind(out, input.event_type);
  places.id = out.pos;
  if (typeof id === "string") out.string(id);
  else out.idBytes(id);
  out.bytes(METADATA_KEY);
  out.value(input.metadata ?? {}, 0);
  writeRule(out, input.policy_rule ?? null);
  places.slot = out.pos - SLOT_TO_REQUEST;
  out.value(input.request_id ?? null, 0);
  writeTimes(out, input.response_time_ms ?? null, input.risk_level ?? null);
  writeTimestamp(out, timestamp);
  writeTool(out, input.tool ?? null);
}
