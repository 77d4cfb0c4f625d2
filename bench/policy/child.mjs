// One engine at one policy size, in its own process: build, check a sample of decisions, then time
// single decisions over the shared request stream. Prints one JSON line on stdout.
// usage: node child.mjs ENGINE SIZE BUDGET_MS SAMPLE
import { generatePolicy, generateRequests } from "./generate.mjs";

const [engineName, sizeText, budgetText, sampleText] = process.argv.slice(2);
const size = Number(sizeText);
const budgetMs = Number(budgetText ?? 1500);
const sampleSize = Number(sampleText ?? 300);
const MIN_SAMPLES = 50;
const MAX_SAMPLES = 400_000;
const HARD_LIMIT_MS = 6_000;

const policy = generatePolicy(size);
const requests = generateRequests(policy, 4000);
const adapter = await import(`./engine-${engineName}.mjs`);

let t = process.hrtime.bigint();
const engine = await adapter.build(policy);
const buildMs = Number(process.hrtime.bigint() - t) / 1e6;
const prepared = requests.map((r) => engine.prepare(r));
// Each timed decision gets its input freshly parsed from JSON (untimed), as a request arrives off the wire:
// cycling through pre-built objects would time cache misses on the request rather than the decision.
const wire = prepared.map((input) => JSON.stringify(input));

const decisions = prepared.slice(0, sampleSize).map((r) => engine.decide(r));

// Warm up (JIT, caches) for a tenth of the budget.
const warmEnd = performance.now() + budgetMs / 10;
for (let i = 0; performance.now() < warmEnd; i++) engine.decide(prepared[i % prepared.length]);

const latencies = new Float64Array(MAX_SAMPLES);
let n = 0;
const start = performance.now();
for (;;) {
  const request = JSON.parse(wire[n % wire.length]);
  t = process.hrtime.bigint();
  engine.decide(request);
  latencies[n++] = Number(process.hrtime.bigint() - t);
  if (n >= MAX_SAMPLES) break;
  if ((n & 63) === 0 || n < MIN_SAMPLES) {
    const elapsed = performance.now() - start;
    if ((elapsed > budgetMs && n >= MIN_SAMPLES) || elapsed > HARD_LIMIT_MS) break;
  }
}
const sorted = latencies.subarray(0, n).sort();
const quantile = (q) => sorted[Math.min(n - 1, Math.floor(q * n))];
let total = 0;
for (let i = 0; i < n; i++) total += sorted[i];
process.stdout.write(
  `${JSON.stringify({
    engine: engineName,
    size,
    samples: n,
    buildMs,
    p50Ns: quantile(0.5),
    p99Ns: quantile(0.99),
    opsPerSec: n / (total / 1e9),
    decisions,
  })}\n`,
);
