import { hasLoneSurrogate, type ContentIssue } from "./faq.js";

/** The most bytes (UTF-8 of its JSON text) a sandbox's `metadata` may take. */
export const METADATA_MAX_BYTES = 2048;
/** The deepest nesting of objects and arrays inside `metadata` (the object itself is level 1). */
export const METADATA_MAX_DEPTH = 8;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const bad = (message: string): { ok: false; issue: ContentIssue } => ({
  ok: false,
  issue: { code: "claim_invalid_request", message },
});

/**
 * Validates the `metadata` of a sandbox creation and returns the JSON text to store: an object (absent is `{}`),
 * nested at most {@link METADATA_MAX_DEPTH} levels, every string and key valid I-JSON (no lone surrogate), at most
 * {@link METADATA_MAX_BYTES} bytes. The walk is iterative and stops at the first problem, so a body nested a
 * hundred thousand levels deep is a 400, not a stack overflow in `JSON.stringify`.
 */
export function parseMetadata(v: unknown): { ok: true; value: string } | { ok: false; issue: ContentIssue } {
  if (v === undefined) return { ok: true, value: "{}" };
  if (!isObj(v)) return bad("`metadata` must be an object");
  const stack: { value: unknown; depth: number }[] = [{ value: v, depth: 1 }];
  // Every string and value takes at least a byte of the JSON text: past the limit it is too large, whatever else.
  let size = 0;
  while (stack.length > 0 && size <= METADATA_MAX_BYTES) {
    const { value, depth } = stack.pop()!;
    size += typeof value === "string" ? value.length : 1;
    if (typeof value === "string" && hasLoneSurrogate(value))
      return bad("`metadata` holds a lone surrogate (not valid I-JSON)");
    if (typeof value !== "object" || value === null) continue;
    if (depth > METADATA_MAX_DEPTH) return bad(`\`metadata\` is nested deeper than ${METADATA_MAX_DEPTH} levels`);
    for (const [k, x] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
      if (typeof k === "string") stack.push({ value: k, depth });
      stack.push({ value: x, depth: depth + 1 });
    }
  }
  const text = size > METADATA_MAX_BYTES ? undefined : JSON.stringify(v);
  if (text === undefined || Buffer.byteLength(text, "utf8") > METADATA_MAX_BYTES)
    return bad(`\`metadata\` is larger than ${METADATA_MAX_BYTES / 1024} KB`);
  return { ok: true, value: text };
}
