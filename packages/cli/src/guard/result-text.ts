/** How deep a result is walked for what the session runtime can read; deeper counts as unreadable. */
const MAX_DEPTH = 64;

/** A guarded function's result as the session runtime reads it, and what it could not read of it. */
export interface ResultText {
  readonly text: string;
  /** Why part of the result is not in `text` (a `Map`, a class instance, a cycle, too deep); absent when whole. */
  readonly unread?: string;
}

/**
 * The text of a result: a string as it is, anything else as JSON. JSON keeps strings, numbers, booleans,
 * arrays and plain objects whole; of a `Map`, a `Set`, a `Buffer` or a class instance it keeps little or
 * nothing, so such a result is reported as not read whole, and the runtime judges as if it held anything.
 */
export function resultText(result: unknown): ResultText {
  if (typeof result === "string") return { text: result };
  const odd = firstOpaque(result, 0, new Set());
  let text: string;
  try {
    text = JSON.stringify(result) ?? "";
  } catch (err) {
    return { text: "", unread: `it could not be written as JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  return odd === undefined ? { text } : { text, unread: odd };
}

function firstOpaque(value: unknown, depth: number, seen: Set<object>): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (depth > MAX_DEPTH) return `it is nested deeper than ${MAX_DEPTH} levels`;
  if (value instanceof Date) return undefined; // JSON keeps it (an ISO time)
  if (seen.has(value)) return "it refers to itself";
  const proto: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return `it holds a \`${typeof name === "string" && name !== "" ? name : "non-plain object"}\` JSON does not keep whole`;
  }
  seen.add(value);
  for (const item of Object.values(value)) {
    const found = firstOpaque(item, depth + 1, seen);
    if (found !== undefined) return found;
  }
  seen.delete(value);
  return undefined;
}
