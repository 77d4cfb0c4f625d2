import { solvePow, type SolveOptions } from "../pow/solver.js";
import { ClaimClientError, printableExcerpt } from "./client-error.js";

/** The client's default limits on the proof-of-work a provider may ask for. */
export const POW_LIMITS = {
  /**
   * Highest difficulty solved, in leading zero bits (28: the elevated difficulty "under abuse" of §29, and this
   * provider's own cap; about 2^28 SHA-256 candidates, tens of seconds on a laptop).
   */
  maxDifficulty: 28,
  /** Longest one solve may run, in ms (10 minutes). */
  solveTimeoutMs: 600_000,
  /** A solve gives up after 2^(difficulty + this) candidates: 16 times the expected work (fails with p ≈ e^-16). */
  budgetBits: 4,
} as const;

/** `sha256_leading_zeros` counts leading zero bits of a SHA-256 digest: 256 is the most there can be. */
export const SPEC_MAX_DIFFICULTY = 256;

/**
 * Checks the difficulty a provider asks for before any work: a whole number of bits the spec allows (0–256; more
 * could never be met and would spin for ever), and at most `max`, the client's limit.
 */
export function assertDifficulty(difficulty: unknown, max: number, where: string): number {
  if (
    typeof difficulty !== "number" ||
    !Number.isInteger(difficulty) ||
    difficulty < 0 ||
    difficulty > SPEC_MAX_DIFFICULTY
  )
    throw new ClaimClientError(
      `${where}: provider asks for a proof-of-work difficulty of \`${printableExcerpt(String(JSON.stringify(difficulty)), 40)}\`, not a whole number of leading zero bits (0–${SPEC_MAX_DIFFICULTY}) as the spec allows`,
      0,
      "claim_difficulty_refused",
    );
  if (difficulty > max)
    throw new ClaimClientError(
      `${where}: provider asks for ${difficulty} bits of proof-of-work; this client solves at most ${max} (maxDifficulty)`,
      0,
      "claim_difficulty_refused",
    );
  return difficulty;
}

/**
 * Solves `challenge` within a work budget of 2^(difficulty + {@link POW_LIMITS}.budgetBits) candidates (or the
 * caller's smaller `maxCandidates`), after which the solver stops its workers; and gives up waiting after
 * `timeoutMs` (`claim_timeout`), when its workers are stopped at once.
 */
export async function solveWithin(
  challenge: string,
  difficulty: number,
  options: SolveOptions | undefined,
  timeoutMs: number,
): Promise<string> {
  const budget = 2 ** (difficulty + POW_LIMITS.budgetBits);
  const stop = new AbortController();
  const solving = solvePow(challenge, difficulty, {
    ...options,
    maxCandidates: Math.min(options?.maxCandidates ?? budget, budget),
    signal: stop.signal,
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new ClaimClientError(
        `proof-of-work of ${difficulty} bits not solved within the client's limit of ${timeoutMs} ms`,
        0,
        "claim_timeout",
      );
      stop.abort(err); // the solver's workers stop now, not when their budget is spent
      reject(err);
    }, timeoutMs);
  });
  void solving.catch(() => undefined); // once timed out, the solver's own failure is no longer anyone's
  try {
    return await Promise.race([solving, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
