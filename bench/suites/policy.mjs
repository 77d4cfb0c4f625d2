#!/usr/bin/env node
// Policy decision latency: ACP's indexed first-match evaluator against Cedar and Casbin (and ACP's own
// rules scanned linearly, to show what the index buys), on the same generated policies of 10, 100,
// 1,000 and 10,000 rules and the same request stream. Every engine runs in its own child process, one
// after another. Prints p50/p99 latency, throughput and ratios, and how many sampled decisions differ
// between engines (must be 0). See bench/README.md.
import { spawnSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const child = fileURLToPath(new URL("../policy/child.mjs", import.meta.url));
const SIZES = [10, 100, 1_000, 10_000];
const ENGINES = ["acp", "acp-noindex", "cedar", "casbin"];
const PEERS = ["acp-noindex", "cedar", "casbin"];
/** Timing budget per engine and size (ms); slow engines stop at a minimum sample count instead. */
const BUDGET_MS = Number(process.env.ACP_BENCH_BUDGET_MS ?? 1500);
/** How many requests' decisions every engine reports for the agreement check. */
const sampleFor = (engine, size) =>
  engine.startsWith("acp") ? 1000 : size >= 10_000 ? 150 : size >= 1_000 ? 300 : 1000;

function run(engine, size) {
  const sample = sampleFor(engine, size);
  const r = spawnSync(process.execPath, [child, engine, String(size), String(BUDGET_MS), String(sample)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`${engine} at ${size} rules failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1));
}

const us = (ns) => (ns / 1000).toFixed(ns < 10_000 ? 2 : ns < 1e6 ? 1 : 0);
const pad = (s, n) => String(s).padStart(n);
const fmtOps = (ops) =>
  ops >= 1e6 ? `${(ops / 1e6).toFixed(2)}M` : ops >= 1e3 ? `${(ops / 1e3).toFixed(1)}k` : ops.toFixed(0);

process.stdout.write(`policy decision latency (one decision per call; budget ${BUDGET_MS} ms per engine and size)\n`);
process.stdout.write(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} (a busy machine inflates every p99)\n\n`,
);
process.stdout.write(
  `${"rules".padStart(6)} ${"engine".padEnd(12)} ${pad("p50 µs", 10)} ${pad("p99 µs", 10)} ${pad("ops/s", 9)} ${pad("samples", 8)} ${pad("build ms", 9)}\n`,
);
const results = new Map();
let mismatches = 0;
let compared = 0;
const failures = [];
for (const size of SIZES) {
  const bySize = {};
  for (const engine of ENGINES) {
    try {
      const res = run(engine, size);
      bySize[engine] = res;
      process.stdout.write(
        `${pad(size, 6)} ${engine.padEnd(12)} ${pad(us(res.p50Ns), 10)} ${pad(us(res.p99Ns), 10)} ${pad(fmtOps(res.opsPerSec), 9)} ${pad(res.samples, 8)} ${pad(res.buildMs.toFixed(1), 9)}\n`,
      );
    } catch (err) {
      failures.push(err.message);
      process.stdout.write(`${pad(size, 6)} ${engine.padEnd(12)} failed\n`);
    }
  }
  const ours = bySize.acp;
  if (ours !== undefined) {
    for (const peer of PEERS) {
      const theirs = bySize[peer];
      if (theirs === undefined) continue;
      const n = Math.min(ours.decisions.length, theirs.decisions.length);
      for (let i = 0; i < n; i++) {
        compared++;
        if (ours.decisions[i] !== theirs.decisions[i]) {
          mismatches++;
          if (mismatches <= 5)
            failures.push(
              `mismatch at ${size} rules, request ${i}: acp ${ours.decisions[i]} vs ${peer} ${theirs.decisions[i]}`,
            );
        }
      }
    }
  }
  results.set(size, bySize);
}

process.stdout.write(`\nratios (peer latency / ACP latency; higher means ACP is faster)\n\n`);
process.stdout.write(
  `${"rules".padStart(6)} ${"peer".padEnd(12)} ${pad("p50 ×", 9)} ${pad("p99 ×", 9)} ${pad("ops/s ×", 9)}\n`,
);
for (const [size, bySize] of results) {
  const ours = bySize.acp;
  if (ours === undefined) continue;
  for (const peer of PEERS) {
    const theirs = bySize[peer];
    if (theirs === undefined) continue;
    const ratio = (a, b) => (a / b).toFixed(a / b >= 100 ? 0 : 1);
    process.stdout.write(
      `${pad(size, 6)} ${peer.padEnd(12)} ${pad(ratio(theirs.p50Ns, ours.p50Ns), 9)} ${pad(ratio(theirs.p99Ns, ours.p99Ns), 9)} ${pad(ratio(ours.opsPerSec, theirs.opsPerSec), 9)}\n`,
    );
  }
}

const targets = [
  [1_000, 10_000],
  [10_000, 20_000],
];
process.stdout.write(`\ntargets: `);
process.stdout.write(
  targets
    .map(([size, limitNs]) => {
      const p99 = results.get(size)?.acp?.p99Ns;
      return `p99 at ${size} rules ${p99 === undefined ? "n/a" : `${us(p99)} µs`} (target < ${limitNs / 1000} µs: ${p99 !== undefined && p99 < limitNs ? "met" : "not met"})`;
    })
    .join("; "),
);
process.stdout.write(`\nagreement: ${mismatches} mismatches in ${compared} sampled decisions (acp vs each peer)\n`);
for (const f of failures) process.stderr.write(`${f}\n`);
process.exitCode = mismatches === 0 && failures.length === 0 ? 0 : 1;
