import { Buffer } from "node:buffer";
import { types } from "node:util";
import { createRedactor, NO_PATTERNS, type Redactor } from "@acp/core";
import { joinedPiecesRedactor, type JoinedPiecesRedactor } from "./stream-text.js";

/** How deep a result is walked; a deeper one is withheld (it cannot be checked whole). */
const MAX_DEPTH = 128;

/** A guarded function's result as the caller may have it: with every secret value replaced, or withheld. */
export type CheckedResult<R> =
  { readonly kind: "shown"; readonly value: R } | { readonly kind: "withheld"; readonly why: string };

/** Binary values whose bytes the guard reads. */
export type Bytes = ArrayBufferView | ArrayBuffer | SharedArrayBuffer;

/** Thrown inside the walk: something the guard cannot look inside. */
class Unwalkable extends Error {}

const isPlainObject = (proto: unknown): boolean => proto === Object.prototype || proto === null;

function nameOf(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "object of no known kind";
}

/** The bytes of a binary value, without a copy. */
export function bytesOf(value: Bytes): Buffer {
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return Buffer.from(value);
}

/**
 * The secrets as the bytes of a binary value hold them, each byte one `latin1` character: the redactor
 * then finds them (and their JSON, base64 and percent spellings) in the bytes read the same way.
 */
export const asUtf8Bytes = (secret: string): string => Buffer.from(secret, "utf8").toString("latin1");
const asUtf16Bytes = (secret: string): string => Buffer.from(secret, "utf16le").toString("latin1");

/**
 * Checks a guarded function's result for the secret values the guard may have put into a call (the
 * vault values in use), wherever JavaScript can hold them, and replaces each with `[REDACTED]`:
 *
 * - strings, numbers and bigints (their digits), symbols' descriptions (a new symbol), and key names;
 * - the strings of one array, and the texts of an array's MCP text parts (`{ type: "text", text }`), read
 *   joined in order: a secret split between items is replaced in the item it starts in (`[REDACTED]`) and
 *   left out of those it runs on into, each item kept a string (or a text part) of its own;
 * - arrays, plain objects (own properties, symbol-keyed and non-enumerable ones too), `Map` (keys and
 *   values), `Set`, `Date` (kept), and the own properties of a `Map`, `Set`, `Date` or binary value;
 * - `Buffer`, `Uint8Array`, `Uint8ClampedArray`, `Int8Array` and `ArrayBuffer`: the secret's UTF-8 bytes
 *   are replaced with those of `[REDACTED]` (a copy of the same kind, of another length, in memory of its
 *   own). A binary view whose memory holds a secret outside it (a pooled `Buffer`'s `.buffer`) is passed
 *   on as a copy of what it shows, and so is a typed array too long to search for own properties.
 *
 * What the guard cannot look inside is withheld whole rather than passed on unchecked (fail closed): a
 * class instance (its private fields, closures and getters are out of reach), a function, a `Proxy`, a
 * property with a getter, a result nested deeper than 128 levels, binary data past {@link MAX_BYTES}, and
 * a wider typed array or `DataView` that holds a secret (its bytes cannot be replaced without changing
 * what its elements mean). Without credentials (`hook` undefined) the result is returned as it is: the
 * guard gave the call no secret.
 *
 * With `snapshot`, an object is always passed on as a copy (in memory of its own), even one that holds no
 * secret: the caller gets what was checked, not an object the function still holds and may change after
 * the check (a cache it returned, and writes a token into later). Without it (an error's properties, which
 * decide whether the error itself is passed on), a result with no secret is returned as it is.
 */
export function checkResultSecrets<R>(
  secretValues: (() => readonly string[]) | undefined,
  result: R,
  snapshot = false,
): CheckedResult<R> {
  if (secretValues === undefined) return { kind: "shown", value: result };
  return resultChecker(secretValues(), snapshot)(result);
}

/**
 * {@link checkResultSecrets} over fixed secret values, their spellings worked out once: for the chunks of
 * one stream.
 */
export function resultChecker(values: readonly string[], snapshot = false): <R>(result: R) => CheckedResult<R> {
  const secrets = values.filter((s) => s !== "");
  const redact = createRedactor(NO_PATTERNS, { secrets: () => secrets });
  const byteSecrets = secrets.map(asUtf8Bytes);
  const redactBytes = createRedactor(NO_PATTERNS, { secrets: () => byteSecrets });
  const wideSecrets = secrets.map(asUtf16Bytes);
  const joined = joinedPiecesRedactor(secrets, (text) => redact(text) as string);
  return <R>(result: R): CheckedResult<R> => {
    const walker = new Walker(redact, redactBytes, wideSecrets, joined);
    try {
      const found = walker.needsCopy(result, 0);
      const object = typeof result === "object" && result !== null;
      if (!found && !(snapshot && object)) return { kind: "shown", value: result };
      return { kind: "shown", value: walker.copy(result) as R };
    } catch (err) {
      // the why names a key or a class, which may be a secret too
      if (err instanceof Unwalkable) return { kind: "withheld", why: redact(err.message) as string };
      throw err;
    }
  };
}

class Walker {
  private readonly seen = new Set<object>();
  private readonly copies = new Map<object, unknown>();
  /** The answers for the string items (by key) of arrays whose items hold a secret between them. */
  private readonly itemAnswers = new Map<object, Map<string, string>>();
  /** The answers for the `text` of MCP text parts that hold part of a secret split between parts. */
  private readonly partAnswers = new Map<object, string>();

  constructor(
    private readonly redact: Redactor,
    private readonly redactBytes: Redactor,
    private readonly wideSecrets: readonly string[],
    private readonly joined: JoinedPiecesRedactor,
  ) {}

  /**
   * Whether `value` holds a secret anywhere (it must be copied); throws {@link Unwalkable} for what cannot
   * be looked inside. Each object is looked at once (shared and cyclic references too).
   */
  needsCopy(value: unknown, depth: number): boolean {
    if (typeof value === "function") throw new Unwalkable("it holds a function, whose closure cannot be checked");
    if (typeof value === "symbol") return this.symbol(value) !== value;
    if (value === null || typeof value !== "object") return this.redact(value) !== value;
    if (depth > MAX_DEPTH) throw new Unwalkable(`it is nested deeper than ${MAX_DEPTH} levels`);
    if (this.seen.has(value)) return false;
    this.seen.add(value);
    if (types.isProxy(value)) throw new Unwalkable("it holds a `Proxy`, which can answer every read differently");
    let found = false;
    const look = (child: unknown): void => {
      if (this.needsCopy(child, depth + 1)) found = true;
    };
    const proto: unknown = Object.getPrototypeOf(value);
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isShared(value)) {
      if (!BYTE_KINDS.has(proto)) throw new Unwalkable(`it holds a \`${nameOf(value)}\` of a kind of its own`);
      found = this.bytesNeedCopy(value);
      const keys = extraKeys(value);
      // too many elements to look for properties among: passed on as a copy, which has none
      if (keys === undefined) return true;
      return this.lookOwn(value, keys, look) || found;
    }
    if (proto === Date.prototype) return this.lookOwn(value, Reflect.ownKeys(value), look) || found;
    if (proto === Map.prototype) {
      for (const [key, item] of value as Map<unknown, unknown>) {
        look(key);
        look(item);
      }
      return this.lookOwn(value, Reflect.ownKeys(value), look) || found;
    }
    if (proto === Set.prototype) {
      for (const item of value as Set<unknown>) look(item);
      return this.lookOwn(value, Reflect.ownKeys(value), look) || found;
    }
    if (typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function") {
      throw new Unwalkable(
        "it is a stream (an AsyncIterable): wrap the tool with `guardStream`, which checks each chunk",
      );
    }
    if (proto !== Array.prototype && !isPlainObject(proto)) {
      throw new Unwalkable(`it holds a \`${nameOf(value)}\`, whose inside cannot be checked`);
    }
    found = this.lookOwn(value, ownKeys(value), look) || found;
    return (Array.isArray(value) && this.joinItems(value)) || found;
  }

  /**
   * Whether the texts of array `value` (its strings, and the `text` of its MCP text parts, in order) hold a
   * secret between items: their answers are then kept for {@link copy}. Each item was looked at first (a
   * getter has thrown).
   */
  private joinItems(value: unknown[]): boolean {
    const items: { readonly key: string; readonly part?: object; readonly text: string }[] = [];
    for (const key of ownKeys(value)) {
      if (typeof key !== "string" || !CANONICAL_INDEX.test(key)) continue;
      const item = (Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor).value as unknown;
      if (typeof item === "string") items.push({ key, text: item });
      else if (isTextPart(item)) items.push({ key, part: item, text: item.text });
    }
    const answers = this.joined(items.map((item) => item.text));
    if (answers === undefined) return false;
    const strings = new Map<string, string>();
    items.forEach((item, i) => {
      const answer = answers[i] as string;
      if (item.part === undefined) {
        strings.set(item.key, answer);
        return;
      }
      const before = this.partAnswers.get(item.part);
      if (before !== undefined && before !== answer) {
        throw new Unwalkable("it holds one text part in two places, whose secrets cannot be replaced in both");
      }
      this.partAnswers.set(item.part, answer);
    });
    this.itemAnswers.set(value, strings);
    return true;
  }

  /** `value`, or a new symbol whose description has the secrets replaced when its own holds one. */
  private symbol(value: symbol): symbol {
    const about = value.description;
    if (about === undefined) return value;
    const hidden = this.redact(about) as string;
    return hidden === about ? value : Symbol(hidden);
  }

  /** Whether the properties `keys` of `value` hold a secret (in a name or a value); throws for a getter. */
  private lookOwn(value: object, keys: readonly (string | symbol)[], look: (child: unknown) => void): boolean {
    let found = false;
    for (const key of keys) {
      const property = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      if (property.get !== undefined || property.set !== undefined) {
        throw new Unwalkable(`it holds a getter (\`${String(key)}\`), which cannot be checked`);
      }
      if (typeof key === "string" ? this.redact(key) !== key : this.symbol(key) !== key) found = true;
      look(property.value);
    }
    return found;
  }

  /**
   * Whether binary `value` holds a secret, or shares its memory with bytes it does not show that hold one
   * (a small `Buffer` is a slice of Node's shared pool, which `.buffer` hands out whole): either way it is
   * passed on as a copy. Throws for a secret whose bytes cannot be replaced, and for bytes too many to check.
   */
  private bytesNeedCopy(value: Bytes): boolean {
    if (value.byteLength > MAX_BYTES) {
      throw new Unwalkable(`it holds a \`${nameOf(value)}\` of more than ${MAX_BYTES} bytes, too many to check`);
    }
    const text = bytesOf(value).toString("latin1");
    const wide = this.wideSecrets.some((s) => text.includes(s));
    const narrow = this.redactBytes(text) !== text;
    if (narrow || wide) {
      if (wide || !byteSized(value)) {
        throw new Unwalkable(`it holds a \`${nameOf(value)}\` with a secret value whose bytes cannot be replaced`);
      }
      return true;
    }
    if (!ArrayBuffer.isView(value) || (value.byteOffset === 0 && value.byteLength === value.buffer.byteLength)) {
      return false;
    }
    if (value.buffer.byteLength > MAX_BYTES) return true; // not looked at: the copy has none of it
    const behind = bytesOf(value.buffer).toString("latin1");
    return this.wideSecrets.some((s) => behind.includes(s)) || this.redactBytes(behind) !== behind;
  }

  /** A copy of `value` with every secret replaced (after {@link needsCopy} said there is one). */
  copy(value: unknown): unknown {
    if (typeof value === "symbol") return this.symbol(value);
    if (value === null || typeof value !== "object") return this.redact(value);
    const done = this.copies.get(value);
    if (done !== undefined) return done;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isShared(value)) {
      const out = this.copyBytes(value) as object;
      this.copies.set(value, out);
      return this.copyOwn(value, extraKeys(value) ?? [], out);
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === Date.prototype) {
      const out = new Date((value as Date).getTime());
      this.copies.set(value, out);
      return this.copyOwn(value, Reflect.ownKeys(value), out);
    }
    if (proto === Map.prototype) {
      const out = new Map<unknown, unknown>();
      this.copies.set(value, out);
      for (const [key, item] of value as Map<unknown, unknown>) out.set(this.copy(key), this.copy(item));
      return this.copyOwn(value, Reflect.ownKeys(value), out);
    }
    if (proto === Set.prototype) {
      const out = new Set<unknown>();
      this.copies.set(value, out);
      for (const item of value as Set<unknown>) out.add(this.copy(item));
      return this.copyOwn(value, Reflect.ownKeys(value), out);
    }
    const out: object = Array.isArray(value)
      ? new Array<unknown>(value.length)
      : (Object.create(proto as object | null) as object);
    this.copies.set(value, out);
    const part = this.partAnswers.get(value);
    const answers = part !== undefined ? new Map([["text", part]]) : this.itemAnswers.get(value);
    this.copyOwn(value, ownKeys(value), out, answers);
    if (!Object.isExtensible(value)) Object.preventExtensions(out); // a frozen result stays frozen
    return out;
  }

  /**
   * `out` with the properties `keys` of `value` on it, copied, their names' secrets replaced; a string
   * whose key `answers` has is its answer (its part of a text joined with others).
   */
  private copyOwn(
    value: object,
    keys: readonly (string | symbol)[],
    out: object,
    answers?: ReadonlyMap<string, string>,
  ): object {
    for (const key of keys) {
      const property = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      const name = typeof key === "string" ? (this.redact(key) as string) : this.symbol(key);
      const free = typeof name === "string" ? unusedKey(out, name) : name;
      const answer = typeof key === "string" ? answers?.get(key) : undefined;
      const copied = answer !== undefined ? this.redact(answer) : this.copy(property.value);
      Object.defineProperty(out, free, { ...property, value: copied });
    }
    return out;
  }

  /** A copy of binary `value` in memory of its own, with every secret's bytes replaced (when it has one). */
  private copyBytes(value: Bytes): unknown {
    const text = bytesOf(value).toString("latin1");
    const redacted = this.redactBytes(text) as string;
    if (redacted !== text) return sameKindBytes(value, Buffer.from(redacted, "latin1"));
    return copyOfBytes(value);
  }
}

/** The bytes of `value` as they are, in a value of its kind in memory of its own. */
export function copyOfBytes(value: Bytes): unknown {
  if (!ArrayBuffer.isView(value)) return value.slice(0);
  const bytes = value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  if (Buffer.isBuffer(value)) return Buffer.from(bytes);
  if (value instanceof DataView) return new DataView(bytes);
  const Kind = value.constructor as new (buffer: ArrayBufferLike) => ArrayBufferView;
  return new Kind(bytes);
}

/** An MCP text part: a plain object whose `type` is `"text"` and whose `text` is a string. */
function isTextPart(value: unknown): value is { readonly type: "text"; readonly text: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (!isPlainObject(Object.getPrototypeOf(value))) return false;
  const type = Object.getOwnPropertyDescriptor(value, "type")?.value as unknown;
  const text = Object.getOwnPropertyDescriptor(value, "text")?.value as unknown;
  return type === "text" && typeof text === "string";
}

/** Bytes past which a binary value is not checked but withheld (its text would near the longest string V8 makes). */
export const MAX_BYTES = 256 * 1024 * 1024;

/** The prototypes of the binary values the guard knows (`Buffer` and JavaScript's own). */
const BYTE_KINDS: ReadonlySet<unknown> = new Set<unknown>(
  [
    Buffer,
    ArrayBuffer,
    DataView,
    Uint8Array,
    Uint8ClampedArray,
    Int8Array,
    Uint16Array,
    Int16Array,
    Uint32Array,
    Int32Array,
    Float32Array,
    Float64Array,
    BigUint64Array,
    BigInt64Array,
    ...(typeof SharedArrayBuffer === "undefined" ? [] : [SharedArrayBuffer]),
  ].map((kind): unknown => kind.prototype as unknown),
);

/** Elements past which a typed array is not searched for properties of its own (each element is one). */
const MAX_SEARCHED_ELEMENTS = 65_536;

const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * The properties of binary `value` beyond its elements (a `token` set on a `Buffer`), or `undefined` for a
 * typed array of too many elements to search (it is passed on as a copy, which has none).
 */
function extraKeys(value: Bytes): (string | symbol)[] | undefined {
  if (!ArrayBuffer.isView(value) || value instanceof DataView) return Reflect.ownKeys(value);
  if ((value as unknown as { length: number }).length > MAX_SEARCHED_ELEMENTS) return undefined;
  return Reflect.ownKeys(value).filter((key) => typeof key === "symbol" || !CANONICAL_INDEX.test(key));
}

/** `bytes` as a new value of the kind of `value` (one {@link byteSized} says can hold any run of bytes). */
export function sameKindBytes(value: Bytes, bytes: Buffer): unknown {
  if (Buffer.isBuffer(value)) {
    // memory of its own, not a slice of Node's shared pool (whose other bytes `.buffer` would hand out)
    const out = Buffer.alloc(bytes.length);
    bytes.copy(out);
    return out;
  }
  if (value instanceof Uint8ClampedArray) return new Uint8ClampedArray(bytes);
  if (value instanceof Int8Array) return new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length).slice();
  if (value instanceof Uint8Array) return new Uint8Array(bytes);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
}

/** The own keys of an array or plain object, symbols and non-enumerable ones too; an array's `length` is its shape, not content. */
export function ownKeys(value: object): (string | symbol)[] {
  const keys = Reflect.ownKeys(value);
  return Array.isArray(value) ? keys.filter((key) => key !== "length") : keys;
}

export function isShared(value: object): value is SharedArrayBuffer {
  return typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer;
}

/** Whether a secret's bytes can be replaced in `value`: a run of bytes, each element one byte. */
export function byteSized(value: Bytes): boolean {
  return (
    value instanceof ArrayBuffer ||
    value instanceof Uint8Array || // a Buffer too
    value instanceof Uint8ClampedArray ||
    value instanceof Int8Array
  );
}

/** `name`, or `name#2`, `name#3`, … when two keys redact to the same text (each keeps its entry). */
function unusedKey(out: object, name: string): string {
  if (!Object.hasOwn(out, name)) return name;
  let n = 2;
  while (Object.hasOwn(out, `${name}#${n}`)) n++;
  return `${name}#${n}`;
}
