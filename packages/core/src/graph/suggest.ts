/**
 * "Did you mean" for graph keys, domains and actions: the closest known name within a small edit distance.
 */
import { editDistance, MAX_SUGGEST_LENGTH } from "../suggest/index.js";

/** The closest candidate to `input` (distance ≤ 2, or ≤ 3 for long names), or undefined. */
export function closestName(input: string, candidates: Iterable<string>): string | undefined {
  if (input.length === 0 || input.length > MAX_SUGGEST_LENGTH) return undefined;
  const limit = input.length > 8 ? 3 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = editDistance(input.toLowerCase(), candidate.toLowerCase());
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
