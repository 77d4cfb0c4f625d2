/**
 * "Did you mean" for graph keys, domains and actions: the closest known name within a small edit distance.
 */

/** Levenshtein distance, capped: returns `limit + 1` as soon as the distance exceeds `limit`. */
export function editDistance(a: string, b: string, limit = 3): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/** The closest candidate to `input` (distance ≤ 2, or ≤ 3 for long names), or undefined. */
export function closestName(input: string, candidates: Iterable<string>): string | undefined {
  const limit = input.length > 8 ? 3 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = editDistance(input.toLowerCase(), candidate.toLowerCase(), limit);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `did you mean \`x\`` for the closest candidate, or undefined. */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const best = closestName(input, candidates);
  return best === undefined ? undefined : `did you mean \`${best}\``;
}
