/**
 * Freezes a value and everything reachable from it (objects and arrays), so no consumer can mutate it.
 * Iterative, so depth costs no stack; shared and cyclic references are frozen once.
 */
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    Object.freeze(current);
    for (const key of Object.keys(current)) pending.push((current as Record<string, unknown>)[key]);
  }
  return value;
}
