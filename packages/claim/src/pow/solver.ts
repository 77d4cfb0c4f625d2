import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { leadingZeroBits } from "./leading-zeros.js";
import { solveMidstate } from "./sha256-midstate.js";

/** Options of {@link solvePow}. */
export interface SolveOptions {
  /** Worker threads (default: available cores − 0, at least 1; 0 = solve on the calling thread). */
  readonly workers?: number;
  /** Give up after this many candidates in total (default 2^40). */
  readonly maxCandidates?: number;
}

/** Worker source: the midstate kernel as text plus a loop over this worker's lanes. */
function workerSource(): string {
  return `const { parentPort, workerData } = require("node:worker_threads");
const __name = (f) => f;
const solveMidstate = ${solveMidstate.toString()};
const { challenge, difficulty, index, stride, lanes } = workerData;
for (let lane = index; lane < lanes; lane += stride) {
  const n = solveMidstate(challenge, difficulty, lane, ${2 ** 34});
  if (n !== undefined) { parentPort.postMessage(n); break; }
}
parentPort.postMessage(null);`;
}

/**
 * Solves a `sha256_leading_zeros` challenge: a nonce of [A-Za-z0-9] such that SHA-256(challenge + nonce) has
 * ≥ `difficulty` leading zero bits. Uses worker threads running the midstate kernel; the first answer wins
 * and the other workers are stopped.
 */
export async function solvePow(challenge: string, difficulty: number, options: SolveOptions = {}): Promise<string> {
  const count = options.workers ?? Math.max(1, availableParallelism());
  if (count === 0 || difficulty <= 12) {
    for (let lane = 0; lane < 62; lane++) {
      const n = solveMidstate(challenge, difficulty, lane, options.maxCandidates ?? 2 ** 34);
      if (n !== undefined) return n;
    }
    throw new Error(`no proof-of-work solution found for difficulty ${difficulty}`);
  }
  const workers = Array.from(
    { length: count },
    (_, index) =>
      new Worker(workerSource(), {
        eval: true,
        workerData: { challenge, difficulty, index, stride: count, lanes: 62 },
      }),
  );
  try {
    return await new Promise<string>((resolve, reject) => {
      let done = 0;
      for (const w of workers) {
        w.on("message", (m: string | null) => {
          if (typeof m === "string") resolve(m);
          else if (++done === workers.length)
            reject(new Error(`no proof-of-work solution found for difficulty ${difficulty}`));
        });
        w.on("error", reject);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The plain loop: `crypto.createHash` per candidate (the baseline the benchmark compares against). */
export function solvePowNaive(challenge: string, difficulty: number, maxCandidates = 2 ** 40): string | undefined {
  for (let i = 0; i < maxCandidates; i++) {
    const nonce = i.toString(36);
    if (
      leadingZeroBits(
        createHash("sha256")
          .update(challenge + nonce, "utf8")
          .digest(),
      ) >= difficulty
    )
      return nonce;
  }
  return undefined;
}
