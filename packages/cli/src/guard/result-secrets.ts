import { Buffer } from "node:buffer";
import { createRedactor, NO_PATTERNS, type Redactor } from "@acp/core";

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
 * - strings, numbers and bigints (their digits), and the key names of plain objects;
 * - arrays, plain objects (own properties, symbol-keyed and non-enumerable ones too), `Map` (keys and
 *   values), `Set`, `Date` (kept);
 * - `Buffer`, `Uint8Array`, `Uint8ClampedArray`, `Int8Array` and `ArrayBuffer`: the secret's UTF-8 bytes
 *   are replaced with those of `[REDACTED]` (a copy of the same kind, of another length).
 *
 * What the guard cannot look inside is withheld whole rather than passed on unchecked (fail closed): a
 * class instance (its private fields, closures and getters are out of reach), a function, a property
 * with a getter, a result nested deeper than 128 levels, and a wider typed array or `DataView` that holds
 * a secret (its bytes cannot be replaced without changing what its elements mean). Without credentials
 * (`hook` undefined) the result is returned as it is: the guard gave the call no secret.
 */
export function checkResultSecrets<R>(
  secretValues: (() => readonly string[]) | undefined,
  result: R,
): CheckedResult<R> {
  if (secretValues === undefined) return { kind: "shown", value: result };
  return resultChecker(secretValues())(result);
}

/**
 * {@link checkResultSecrets} over fixed secret values, their spellings worked out once: for the chunks of
 * one stream.
 */
export function resultChecker(values: readonly string[]): <R>(result: R) => CheckedResult<R> {
  const secrets = values.filter((s) => s !== "");
  const redact = createRedactor(NO_PATTERNS, { secrets: () => secrets });
  const byteSecrets = secrets.map(asUtf8Bytes);
  const redactBytes = createRedactor(NO_PATTERNS, { secrets: () => byteSecrets });
  const wideSecrets = secrets.map(asUtf16Bytes);
  return <R>(result: R): CheckedResult<R> => {
    const walker = new Walker(redact, redactBytes, wideSecrets);
    try {
      if (!walker.needsCopy(result, 0)) return { kind: "shown", value: result };
      return { kind: "shown", value: walker.copy(result) as R };
    } catch (err) {
      if (err instanceof Unwalkable) return { kind: "withheld", why: err.message };
      throw err;
    }
  };
}

class Walker {
  private readonly seen = new Set<object>();
  private readonly copies = new Map<object, unknown>();

  constructor(
    private readonly redact: Redactor,
    private readonly redactBytes: Redactor,
    private readonly wideSecrets: readonly string[],
  ) {}

  /**
   * Whether `value` holds a secret anywhere (it must be copied); throws {@link Unwalkable} for what cannot
   * be looked inside. Each object is looked at once (shared and cyclic references too).
   */
  needsCopy(value: unknown, depth: number): boolean {
    if (typeof value === "function") throw new Unwalkable("it holds a function, whose closure cannot be checked");
    if (value === null || typeof value !== "object") return this.redact(value) !== value;
    if (depth > MAX_DEPTH) throw new Unwalkable(`it is nested deeper than ${MAX_DEPTH} levels`);
    if (this.seen.has(value)) return false;
    this.seen.add(value);
    let found = false;
    const look = (child: unknown): void => {
      if (this.needsCopy(child, depth + 1)) found = true;
    };
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isShared(value)) return this.bytesNeedCopy(value);
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === Date.prototype) return false;
    if (proto === Map.prototype) {
      for (const [key, item] of value as Map<unknown, unknown>) {
        look(key);
        look(item);
      }
      return found;
    }
    if (proto === Set.prototype) {
      for (const item of value as Set<unknown>) look(item);
      return found;
    }
    if (typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function") {
      throw new Unwalkable(
        "it is a stream (an AsyncIterable): wrap the tool with `guardStream`, which checks each chunk",
      );
    }
    if (proto !== Array.prototype && !isPlainObject(proto)) {
      throw new Unwalkable(`it holds a \`${nameOf(value)}\`, whose inside cannot be checked`);
    }
    for (const key of ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      if (property.get !== undefined || property.set !== undefined) {
        throw new Unwalkable(`it holds a getter (\`${String(key)}\`), which cannot be checked`);
      }
      if (typeof key === "string" && this.redact(key) !== key) found = true;
      look(property.value);
    }
    return found;
  }

  private bytesNeedCopy(value: Bytes): boolean {
    const text = bytesOf(value).toString("latin1");
    const wide = this.wideSecrets.some((s) => text.includes(s));
    const narrow = this.redactBytes(text) !== text;
    if (!narrow && !wide) return false;
    const kind = nameOf(value);
    if (wide || !byteSized(value)) {
      throw new Unwalkable(`it holds a \`${kind}\` with a secret value whose bytes cannot be replaced`);
    }
    return true;
  }

  /** A copy of `value` with every secret replaced (after {@link needsCopy} said there is one). */
  copy(value: unknown): unknown {
    if (value === null || typeof value !== "object") return this.redact(value);
    const done = this.copies.get(value);
    if (done !== undefined) return done;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value) || isShared(value)) return this.copyBytes(value);
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === Date.prototype) return value;
    if (proto === Map.prototype) {
      const out = new Map<unknown, unknown>();
      this.copies.set(value, out);
      for (const [key, item] of value as Map<unknown, unknown>) out.set(this.copy(key), this.copy(item));
      return out;
    }
    if (proto === Set.prototype) {
      const out = new Set<unknown>();
      this.copies.set(value, out);
      for (const item of value as Set<unknown>) out.add(this.copy(item));
      return out;
    }
    const out: object = Array.isArray(value)
      ? new Array<unknown>(value.length)
      : (Object.create(proto as object | null) as object);
    this.copies.set(value, out);
    for (const key of ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      const name = typeof key === "string" ? (this.redact(key) as string) : key;
      const free = typeof name === "string" ? unusedKey(out, name) : name;
      Object.defineProperty(out, free, { ...property, value: this.copy(property.value) });
    }
    return out;
  }

  private copyBytes(value: Bytes): unknown {
    const text = bytesOf(value).toString("latin1");
    return sameKindBytes(value, Buffer.from(this.redactBytes(text) as string, "latin1"));
  }
}

/** `bytes` as a new value of the kind of `value` (one {@link byteSized} says can hold any run of bytes). */
export function sameKindBytes(value: Bytes, bytes: Buffer): unknown {
  if (Buffer.isBuffer(value)) return bytes;
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
