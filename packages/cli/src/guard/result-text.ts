import { Buffer } from "node:buffer";

/** How deep a result is walked for what the session runtime can read; deeper counts as unreadable. */
const MAX_DEPTH = 64;

/** A guarded function's result as the session runtime reads it, and what it could not read of it. */
export interface ResultText {
  readonly text: string;
  /** Why part of the result is not in `text` (a class instance, a cycle, too deep); absent when whole. */
  readonly unread?: string;
}

/**
 * The text of a result: a string as it is, anything else as JSON, with a `Map` as its entries, a `Set` as
 * its items and bytes (`Buffer`, `Uint8Array`, `ArrayBuffer`, …) as the UTF-8 text they hold. JSON keeps
 * strings, numbers, booleans, arrays, plain objects and typed arrays of numbers whole; of a class
 * instance or a `DataView` it keeps little or nothing, so such a result is reported as not read whole, and
 * the runtime judges as if it held anything.
 */
export function resultText(result: unknown): ResultText {
  if (typeof result === "string") return { text: result };
  const odd = firstOpaque(result, 0, new Set());
  let text: string;
  try {
    text = JSON.stringify(result, readable) ?? "";
  } catch (err) {
    return { text: "", unread: `it could not be written as JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  return odd === undefined ? { text } : { text, unread: odd };
}

/** Bytes that hold text as often as not: read as UTF-8. */
function isByteRun(value: unknown): value is Uint8Array | Uint8ClampedArray | Int8Array | ArrayBuffer {
  return (
    value instanceof Uint8Array ||
    value instanceof Uint8ClampedArray ||
    value instanceof Int8Array ||
    value instanceof ArrayBuffer
  );
}

/** JSON's replacer: a Map as `[key, value]` pairs, a Set as an array, bytes as their UTF-8 text. */
function readable(this: unknown, key: string, value: unknown): unknown {
  // `value` is what `toJSON` made of it (a Buffer's `{ type, data }`); the holder has the original
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof Map && Object.getPrototypeOf(original) === Map.prototype) return [...original];
  if (original instanceof Set && Object.getPrototypeOf(original) === Set.prototype) return [...original];
  if (isByteRun(original)) {
    const bytes =
      original instanceof ArrayBuffer
        ? Buffer.from(original)
        : Buffer.from(original.buffer, original.byteOffset, original.byteLength);
    return bytes.toString("utf8");
  }
  return value;
}

function firstOpaque(value: unknown, depth: number, seen: Set<object>): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (depth > MAX_DEPTH) return `it is nested deeper than ${MAX_DEPTH} levels`;
  if (value instanceof Date) return undefined; // JSON keeps it (an ISO time)
  if (isByteRun(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) return undefined;
  if (seen.has(value)) return "it refers to itself";
  const proto: unknown = Object.getPrototypeOf(value);
  let items: Iterable<unknown>;
  if (proto === Map.prototype) items = [...(value as Map<unknown, unknown>)].flat();
  else if (proto === Set.prototype) items = value as Set<unknown>;
  else if (Array.isArray(value) || proto === Object.prototype || proto === null) items = Object.values(value);
  else {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return `it holds a \`${typeof name === "string" && name !== "" ? name : "non-plain object"}\` JSON does not keep whole`;
  }
  seen.add(value);
  for (const item of items) {
    const found = firstOpaque(item, depth + 1, seen);
    if (found !== undefined) return found;
  }
  seen.delete(value);
  return undefined;
}
