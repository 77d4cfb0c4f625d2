/**
 * Numbers JSON parsing may have rounded: beyond ±2^53−1 every double is an integer, and `1234567890123456789`
 * (a 19-digit snowflake id) is read as 1234567890123456768. Where such a number is an argument a caller
 * runs, the service refuses it rather than carry a value the sender never wrote (`unsafe_integer`, as the
 * pipeline refuses one in a request's `arguments`).
 */

/** Whether `n` lies beyond ±`Number.MAX_SAFE_INTEGER` (where a double may be a rounded integer). */
export function isBeyondSafeInteger(n: number): boolean {
  return n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER;
}

/**
 * The path (`modifications.ids.0`) of the first number beyond ±2^53−1 in `value`, in document order, or
 * null. Walked without recursion, so a body nested as deep as the body limit allows cannot overflow the stack.
 */
export function findUnsafeInteger(value: unknown, root: string): string | null {
  const stack: { readonly value: unknown; readonly path: string }[] = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop() as { value: unknown; path: string };
    if (typeof v === "number") {
      if (isBeyondSafeInteger(v)) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i] as unknown, path: `${path}.${i}` });
    } else if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        stack.push({ value: (v as Record<string, unknown>)[key], path: `${path}.${key}` });
      }
    }
  }
  return null;
}

/** The message of a refused number at `path`, worded as the pipeline's `unsafe_integer`. */
export function unsafeIntegerMessage(path: string): string {
  return (
    `${path.slice(0, 200)}: a number beyond ±${Number.MAX_SAFE_INTEGER} cannot be carried exactly (JSON numbers ` +
    "that large may have lost digits when parsed, so the value recorded could differ from the one sent): send it as a string"
  );
}
