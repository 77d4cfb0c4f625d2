/**
 * Did-you-mean for every parser (policy, graph, contract, CLI).
 * Edit distance for did-you-mean suggestions: the optimal-string-alignment distance (Levenshtein plus
 * adjacent transpositions, so `ruels` is one edit from `rules`).
 */

/** Inputs longer than this get no suggestion (keeps the quadratic table small on hostile input). */
export const MAX_SUGGEST_LENGTH = 64;

/** Number of single-character insertions, deletions, substitutions and adjacent swaps from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * cols + j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `word` (case-insensitive), when it is close enough to be a likely typo:
 * at most one edit for words up to 5 characters, two up to 8, three beyond. `synonyms` maps words people
 * commonly write by mistake (`refuse`) to the intended candidate (`deny`).
 */
export function suggest(
  word: string,
  candidates: readonly string[],
  synonyms: Readonly<Record<string, string>> = {},
): string | undefined {
  if (word.length === 0 || word.length > MAX_SUGGEST_LENGTH) return undefined;
  const lower = word.toLowerCase();
  if (Object.hasOwn(synonyms, lower)) return synonyms[lower];
  const limit = lower.length <= 5 ? 1 : lower.length <= 8 ? 2 : 3;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}
