import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { leadingZeroBits } from "./leading-zeros.js";
import { LANE_CANDIDATES, POW_LANES, powLayout } from "./sha256-layout.js";
import { powNonce, scanMidstate } from "./sha256-midstate.js";
import { instantiateWasmKernel, scanWasm, wasmKernelBytes, type WasmKernel } from "./sha256-wasm.js";

/** Which SHA-256 kernel searches: the SIMD WebAssembly one, or the JS reference (also the fallback). */
export type PowKernel = "wasm" | "js";

/** Options of {@link solvePow}. */
export interface SolveOptions {
  /** Worker threads (default: available cores, at least 1; 0 = solve on the calling thread). */
  readonly workers?: number;
  /** Give up after about this many candidates in total (default 2^40). */
  readonly maxCandidates?: number;
  /** Kernel (default `wasm`; `js` where WebAssembly SIMD is unavailable, whatever is asked). */
  readonly kernel?: PowKernel;
  /** Stops the search: the workers are terminated and the solve fails with the signal's reason. */
  readonly signal?: AbortSignal;
}

let mainKernel: WasmKernel | null | undefined;

/** The WebAssembly kernel on this thread, instantiated once; undefined where the runtime cannot run it. */
export function wasmKernel(): WasmKernel | undefined {
  if (mainKernel === undefined) mainKernel = instantiateWasmKernel(wasmKernelBytes()) ?? null;
  return mainKernel ?? undefined;
}

/** Worker source: the self-contained kernel functions as text, plus a loop over this worker's lanes. */
function workerSource(): string {
  return `const { parentPort, workerData } = require("node:worker_threads");
const __name = (f) => f;
const powLayout = ${powLayout.toString()};
const scanMidstate = ${scanMidstate.toString()};
const powNonce = ${powNonce.toString()};
const instantiateWasmKernel = ${instantiateWasmKernel.toString()};
const scanWasm = ${scanWasm.toString()};
const { challenge, difficulty, index, stride, lanes, bytes } = workerData;
const kernel = bytes ? instantiateWasmKernel(bytes) : undefined;
for (let lane = index; lane < lanes; lane += stride) {
  const layout = powLayout(challenge, lane);
  const n = kernel
    ? scanWasm(kernel, layout, difficulty, 0, ${LANE_CANDIDATES}, scanMidstate)
    : scanMidstate(layout, difficulty, 0, ${LANE_CANDIDATES});
  if (n >= 0) { parentPort.postMessage(powNonce(layout, n)); break; }
}
parentPort.postMessage(null);`;
}

/** Solves on the calling thread, lane after lane. */
function solveHere(challenge: string, difficulty: number, lanes: number, kernel: WasmKernel | undefined): string {
  for (let lane = 0; lane < lanes; lane++) {
    const layout = powLayout(challenge, lane);
    const n = kernel
      ? scanWasm(kernel, layout, difficulty, 0, LANE_CANDIDATES, scanMidstate)
      : scanMidstate(layout, difficulty, 0, LANE_CANDIDATES);
    if (n >= 0) return powNonce(layout, n);
  }
  throw new Error(`no proof-of-work solution found for difficulty ${difficulty}`);
}

/**
 * Solves a `sha256_leading_zeros` challenge: a nonce of [A-Za-z0-9] such that SHA-256(challenge + nonce) has
 * ≥ `difficulty` leading zero bits. Worker threads each search their own lanes with the SIMD WebAssembly kernel
 * (the JS kernel where WebAssembly SIMD is unavailable or `kernel: "js"`); the first answer wins and the other
 * workers are stopped. Low difficulties are solved on the calling thread (a worker costs more than the work).
 */
export async function solvePow(challenge: string, difficulty: number, options: SolveOptions = {}): Promise<string> {
  const signal = options.signal;
  signal?.throwIfAborted();
  const count = options.workers ?? Math.max(1, availableParallelism());
  const lanes = Math.min(POW_LANES, Math.max(1, Math.ceil((options.maxCandidates ?? 2 ** 40) / LANE_CANDIDATES)));
  const useWasm = options.kernel !== "js" && wasmKernel() !== undefined;
  if (count === 0 || difficulty <= 12)
    return solveHere(challenge, difficulty, lanes, useWasm ? wasmKernel() : undefined);
  const bytes = useWasm ? wasmKernelBytes() : undefined;
  const workers = Array.from(
    { length: count },
    (_, index) =>
      new Worker(workerSource(), {
        eval: true,
        workerData: { challenge, difficulty, index, stride: count, lanes, bytes },
      }),
  );
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<string>((resolve, reject) => {
      // stopped from outside: the finally below terminates every worker at once
      onAbort = (): void => {
        const reason: unknown = signal?.reason;
        reject(reason instanceof Error ? reason : new Error("the proof-of-work search was stopped"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
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
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
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
