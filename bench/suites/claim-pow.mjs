#!/usr/bin/env node
// Agent Claim Protocol proof-of-work (`sha256_leading_zeros`): candidates per second of the agent-side
// solver's midstate kernel (challenge blocks compressed once, pre-nonce rounds computed once, 32-bit JS
// arithmetic) against the plain loop the issue names as baseline (`crypto.createHash` per candidate), both
// on one thread; then the worker-thread solver end to end at the base difficulty (wall time per solution,
// effective MH/s = expected 2^d candidates / time). Reports MH/s per core. Imports the built package
// (`npx tsc -b packages/claim`, or `npm run bench` which builds first).
import { createHash } from "node:crypto";
import { availableParallelism, cpus, loadavg } from "node:os";
import { leadingZeroBits, solveMidstate, solvePow } from "../../packages/claim/dist/index.js";

const BUDGET = Number(process.env.ACP_BENCH_BUDGET_MS ?? 1500);
const challenge = `v1-20-1767225600-${"0123456789abcdef".repeat(2)}-${"fedcba9876543210".repeat(2)}`;

function rate(fn) {
  let n = 0;
  let best = 0;
  const end = performance.now() + BUDGET;
  while (performance.now() < end) {
    const t = performance.now();
    const k = fn();
    const ms = performance.now() - t;
    n += k;
    best = Math.max(best, k / ms / 1000);
  }
  return { mhs: best, candidates: n };
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
const midstate = rate(() => {
  solveMidstate(challenge, 64, lane++ % 62, N);
  return N;
});
const copy = rate(() => {
  const base = createHash("sha256").update(challenge, "utf8");
  for (let i = 0; i < N; i++) leadingZeroBits(base.copy().update(i.toString(36)).digest());
  return N;
});

const workers = Math.max(1, availableParallelism());
const difficulty = Number(process.env.ACP_BENCH_POW_DIFFICULTY ?? 20);
const runs = Number(process.env.ACP_BENCH_POW_RUNS ?? 8);
const times = [];
for (let i = 0; i < runs; i++) {
  const c = `${challenge}-${i}`;
  const t = performance.now();
  await solvePow(c, difficulty, { workers });
  times.push(performance.now() - t);
}
const mean = times.reduce((a, b) => a + b, 0) / times.length;
const effective = 2 ** difficulty / mean / 1000;

const row = (name, mhs, note) => `${name.padEnd(44)} ${mhs.toFixed(2).padStart(8)} MH/s  ${note}`;
console.log(
  `cpus: ${cpus().length} (${cpus()[0]?.model ?? "?"}), load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
console.log(row("createHash loop (1 thread, baseline)", naive.mhs, "1.00x"));
console.log(row("createHash + hash.copy() midstate (1 thread)", copy.mhs, `${(copy.mhs / naive.mhs).toFixed(2)}x`));
console.log(row("midstate JS kernel (1 thread)", midstate.mhs, `${(midstate.mhs / naive.mhs).toFixed(2)}x`));
console.log(
  row(
    `solvePow, ${workers} worker(s), d=${difficulty}, ${runs} runs`,
    effective,
    `${(effective / workers).toFixed(2)} MH/s per core; mean ${mean.toFixed(0)} ms per solution (expected 2^${difficulty} candidates)`,
  ),
);
console.log(`target: 4 MH/s per core (issue 8); kernel per core: ${midstate.mhs.toFixed(2)} MH/s`);
