#!/usr/bin/env node
// Agent Claim Protocol proof-of-work (`sha256_leading_zeros`): candidates per second on one thread of
//   1. the plain loop the issue names as baseline (`crypto.createHash` per candidate),
//   2. the JS midstate kernel (blocks before the last compressed once, rounds before the varying word
//      computed once, 32-bit JS arithmetic; the reference and the fallback),
//   3. the WebAssembly SIMD kernel (the same search, 4 candidates per i32x4 vector),
// as ratios to the baseline; then the worker-thread solver end to end at the base difficulty (wall time per
// solution, effective MH/s = expected 2^d candidates / time). Imports the built package
// (`npx tsc -b packages/cli`, or `npm run bench` which builds first).
import { createHash } from "node:crypto";
import { availableParallelism, cpus, loadavg } from "node:os";
import {
  checkPow,
  leadingZeroBits,
  powLayout,
  scanMidstate,
  scanWasm,
  solvePow,
  wasmKernel,
} from "../../packages/claim/dist/index.js";

const BUDGET = Number(process.env.ACP_BENCH_BUDGET_MS ?? 1500);
const challenge = `v1-20-1767225600-${"0123456789abcdef".repeat(2)}-${"fedcba9876543210".repeat(2)}`;

/** Best observed MH/s of `fn` (which returns how many candidates it tried) over the time budget. */
function rate(fn) {
  let best = 0;
  const end = performance.now() + BUDGET;
  while (performance.now() < end) {
    const t = performance.now();
    const k = fn();
    best = Math.max(best, k / (performance.now() - t) / 1000);
  }
  return best;
}

const N = 200_000;
const naive = rate(() => {
  for (let i = 0; i < N; i++)
    leadingZeroBits(
      createHash("sha256")
        .update(challenge + i.toString(36), "utf8")
        .digest(),
    );
  return N;
});
let lane = 0;
// Difficulty 64: nothing is found, so every candidate of the range is hashed.
const js = rate(() => {
  scanMidstate(powLayout(challenge, lane++), 64, 0, N);
  return N;
});
const kernel = wasmKernel();
const W = 2_000_000;
const wasm = kernel
  ? rate(() => {
      scanWasm(kernel, powLayout(challenge, lane++), 64, 0, W, scanMidstate);
      return W;
    })
  : 0;

const workers = Math.max(1, availableParallelism());
const difficulty = Number(process.env.ACP_BENCH_POW_DIFFICULTY ?? 20);
const runs = Number(process.env.ACP_BENCH_POW_RUNS ?? 8);
async function endToEnd(kind) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const c = `${challenge}-${kind}-${i}`;
    const t = performance.now();
    const nonce = await solvePow(c, difficulty, { workers, kernel: kind });
    times.push(performance.now() - t);
    if (!checkPow(c, nonce, difficulty)) throw new Error(`solvePow (${kind}) returned a wrong nonce`);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { mean, effective: 2 ** difficulty / mean / 1000 };
}
const e2eWasm = await endToEnd("wasm");
const e2eJs = await endToEnd("js");

const row = (name, mhs, note) => `${name.padEnd(48)} ${mhs.toFixed(2).padStart(8)} MH/s  ${note}`;
console.log(
  `cpus: ${cpus().length} (${cpus()[0]?.model ?? "?"}), load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
console.log(row("createHash loop (1 thread, baseline)", naive, "1.00x"));
console.log(row("JS midstate kernel (1 thread)", js, `${(js / naive).toFixed(2)}x`));
console.log(
  row(
    "WASM SIMD midstate kernel (1 thread)",
    wasm,
    kernel ? `${(wasm / naive).toFixed(2)}x (${(wasm / js).toFixed(2)}x the JS kernel)` : "unavailable here",
  ),
);
for (const [kind, r] of [
  ["wasm", e2eWasm],
  ["js", e2eJs],
])
  console.log(
    row(
      `solvePow ${kind}, ${workers} worker(s), d=${difficulty}, ${runs} runs`,
      r.effective,
      `${(r.effective / workers).toFixed(2)} MH/s per core; mean ${r.mean.toFixed(0)} ms per solution`,
    ),
  );
console.log(`target: 4 MH/s per core (issue 8); WASM kernel per core: ${wasm.toFixed(2)} MH/s`);
