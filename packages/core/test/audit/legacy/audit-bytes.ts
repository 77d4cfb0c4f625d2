// The audit writer's code path as it was before 26 Nov 2026 (commit 37746fa), kept only for
// record-equivalence.test.ts, which holds the current code to the same bytes and hashes. Not used by ACP.
import { MAX_CANONICAL_DEPTH, SHA256_PREFIX } from "../../../src/canonical-json/index.js";
import { isWellFormedString, namingValueOf, refuseNonJson, sortedKeysOf, timestampValueOf } from "./audit-json.js";
import type { AuditEventInput } from "../../../src/audit/event.js";

// RFC 8785 canonical JSON written straight into an arena as UTF-8 bytes, for the audit writer's staged
// lines (`audit-line.ts`). The string path (`audit-json.ts`) builds a string of many pieces that the
// buffer write then flattens and encodes; this writes each piece where it goes: pieces that repeat
// from event to event (the head, the event type, the policy rule, the tail) are kept as bytes and
// copied, short plain-ASCII strings (ids, names, most metadata) are copied code unit by code unit
// while checking they need no escape, anything else takes `JSON.stringify`'s escaping as before.
// A property test holds the staged-and-sealed bytes equal to `serializeAuditEvent(sealAuditEvent(…))`.

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
/** Only strings and null are remembered by value: an object could change between two events. */
const byValue = (v: unknown): boolean => v === null || typeof v === "string";
const utf8 = (text: string): Buffer => Buffer.from(text, "utf8");

/** Memo of the last head (`{"agent":…,"category":…,"decision":…`): one producer's events usually share it. */
let headOf: { agent: unknown; category: unknown; decision: unknown; bytes: Buffer } = {
  agent: NOTHING,
  category: NOTHING,
  decision: NOTHING,
  bytes: Buffer.alloc(0),
};
/** Memo of the last tail (`,"risk_level":…,"version":"0.2.0"}` and the newline), likewise. */
let tailOf: { risk: unknown; timestamp: unknown; tool: unknown; bytes: Buffer } = {
  risk: NOTHING,
  timestamp: NOTHING,
  tool: NOTHING,
  bytes: Buffer.alloc(0),
};

function headFor(agent: unknown, category: unknown, decision: unknown): Buffer {
  const last = headOf;
  if (last.agent === agent && last.category === category && last.decision === decision) return last.bytes;
  const text = `{"agent":${namingValueOf(agent)},"category":${namingValueOf(category)},"decision":${namingValueOf(decision)}`;
  const bytes = utf8(text);
  if (byValue(agent) && byValue(category) && byValue(decision)) headOf = { agent, category, decision, bytes };
  return bytes;
}

function tailFor(risk: unknown, timestamp: unknown, tool: unknown): Buffer {
  const last = tailOf;
  if (last.risk === risk && last.timestamp === timestamp && last.tool === tool) return last.bytes;
  const text =
    `,"risk_level":${namingValueOf(risk)},"timestamp":${timestampValueOf(timestamp)},"tool":${namingValueOf(tool)}` +
    `,"type":"audit_event","version":"0.2.0"}\n`;
  const bytes = utf8(text);
  if (byValue(risk) && byValue(timestamp) && byValue(tool)) tailOf = { risk, timestamp, tool, bytes };
  return bytes;
}

/** A one-entry memo: the bytes made for the last value, when it was a string or null. */
interface LastBytes {
  value: unknown;
  bytes: Buffer;
}
/** `,"event_type":…,"id":` for each event type seen (a short list): consecutive events often differ in type. */
const kinds = new Map<unknown, Buffer>();
const MAX_KINDS = 256;

function kindFor(type: unknown): Buffer {
  let bytes = kinds.get(type);
  if (bytes === undefined) {
    bytes = utf8(kindText(type));
    if (typeof type === "string") {
      if (kinds.size >= MAX_KINDS) kinds.clear();
      kinds.set(type, bytes);
    }
  }
  return bytes;
}

const ruleOf: LastBytes = { value: NOTHING, bytes: Buffer.alloc(0) };

function lastOf(memo: LastBytes, value: unknown, make: (v: unknown) => string): Buffer {
  if (memo.value === value) return memo.bytes;
  const bytes = utf8(make(value));
  if (byValue(value)) {
    memo.value = value;
    memo.bytes = bytes;
  }
  return bytes;
}

const kindText = (v: unknown): string => `,"event_type":${namingValueOf(v)},"id":`;
const ruleText = (v: unknown): string => `,"policy_rule":${namingValueOf(v)},"previous_event_hash":"${SHA256_PREFIX}`;

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
  out.bytes(headFor(input.agent ?? null, input.category ?? null, input.decision ?? null));
  places.headEnd = out.pos;
  out.bytes(kindFor(input.event_type));
  if (typeof id === "string") out.string(id);
  else out.idBytes(id);
  out.bytes(METADATA_KEY);
  out.value(input.metadata ?? {}, 0);
  out.bytes(lastOf(ruleOf, input.policy_rule ?? null, ruleText));
  places.slot = out.pos - PREVIOUS_OPEN_BYTES;
  out.skip(64);
  out.bytes(REQUEST_KEY);
  out.value(input.request_id ?? null, 0);
  out.bytes(TIME_KEY);
  out.value(input.response_time_ms ?? null, 0);
  out.bytes(tailFor(input.risk_level ?? null, timestamp, input.tool ?? null));
}
