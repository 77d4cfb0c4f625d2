import { editDistance, MAX_SUGGEST_LENGTH } from "../suggest/index.js";

/**
 * The candidate closest to `word` when it is a plausible typo (distance at most a third of its
 * length, at least 1), else undefined. Long input is not compared, so a hostile value costs nothing.
 */
export function closestWord(word: string, candidates: readonly string[]): string | undefined {
  if (word.length === 0 || word.length > MAX_SUGGEST_LENGTH) return undefined;
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
