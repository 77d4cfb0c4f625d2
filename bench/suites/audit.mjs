#!/usr/bin/env node
// Audit append throughput: ACP's audit writer (redact, JCS-canonicalize, SHA-256 chain, file lock,
// signed checkpoint every 1000 events) in `fsync: every` and `fsync: batch` modes, against appending
// the same lines to a plain file without hashing, with the same fsync pattern (one fsync per line; one
// per batch of 4096; the same 4096 precomputed lines cycled). Prints events/s and the ratio ACP / plain.
// Batch mode is measured twice: producers handing `appendMany` 4096 events per call (two calls in
// flight), and producers calling `append` once per event (8192 in flight). Target: batch >= 100,000
// events/s. Also prints each batch run's events per CPU-second (user + system time of this process),
// which a machine shared with other work disturbs far less than wall-clock rates, the same in µs per
// event, and how much of that is the bench making its own input objects (measured apart).
// Needs the built packages (`npx tsc -b packages/store`); writes only into a temporary directory.
import { generateKeyPairSync } from "node:crypto";
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const core = await import("../../packages/core/dist/index.js");
const store = await import("../../packages/store/dist/index.js");

const BATCH_EVENTS = Number(process.env.ACP_BENCH_AUDIT_EVENTS ?? 200_000);
const EVERY_BUDGET_MS = Number(process.env.ACP_BENCH_BUDGET_MS ?? 2000);
const BATCH = 4096;
const IN_FLIGHT = 8192;
const dir = mkdtempSync(join(tmpdir(), "acp-bench-audit-"));
const { privateKey } = generateKeyPairSync("ed25519");

const input = (i) => ({
  event_type: "policy_evaluated",
  request_id: `cr_${i}`,
  agent: "bench-agent",
  tool: "send_email",
  category: "communication",
  risk_level: "medium",
  decision: "ask",
  response_time_ms: 3,
  policy_rule: "ask-before-send",
  metadata: { parameters: { to: "someone@example.com", subject: `report ${i}`, body_bytes: 2048 } },
});

/** CPU time per event of making the bench's own inputs (included in the batch runs' CPU figures). */
function inputCost(n) {
  const start = process.cpuUsage();
  let keep = 0;
  for (let i = 0; i < n; i++) keep += input(i).request_id.length;
  const cpu = process.cpuUsage(start);
  return keep > 0 ? (cpu.user + cpu.system) / n : 0;
}

/** The lines the writer would produce, precomputed, for the plain-file peer. */
function sampleLines(n) {
  let previous = null;
  const lines = [];
  for (let i = 0; i < n; i++) {
    const body = core.createAuditEventBody(input(i), {
      id: `ae_${i}`,
      timestamp: new Date(Date.UTC(2026, 0, 15) + i).toISOString(),
      previousEventHash: previous,
    });
    const sealed = core.sealAuditLine(body);
    previous = sealed.event.event_hash;
    lines.push(sealed.line);
  }
  return lines;
}

/** Appends `total` lines (cycling through `lines`) to a plain file, `perWrite` lines per write + fsync. */
function plain(lines, total, perWrite, file) {
  const fd = openSync(join(dir, file), "a", 0o600);
  const chunks = [];
  for (let i = 0; i < lines.length; i += perWrite) chunks.push(`${lines.slice(i, i + perWrite).join("\n")}\n`);
  const start = performance.now();
  for (let written = 0, c = 0; written < total; written += perWrite, c++) {
    writeSync(fd, chunks[c % chunks.length]);
    fdatasyncSync(fd);
  }
  const ms = performance.now() - start;
  closeSync(fd);
  return (total / ms) * 1000;
}

async function acpEvery() {
  const log = await store.openAuditLog(join(dir, "every.jsonl"), { clock: () => new Date(), signer: privateKey });
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < EVERY_BUDGET_MS) await log.append(input(n++));
  const ms = performance.now() - start;
  await log.close();
  return { rate: (n / ms) * 1000, n };
}

async function acpBatch(n, many) {
  const path = join(dir, many ? "batch-many.jsonl" : "batch-each.jsonl");
  const log = await store.openAuditLog(path, { clock: () => new Date(), signer: privateKey, fsync: "batch" });
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  // producers keep up to IN_FLIGHT events outstanding, as many concurrent tool calls would: with
  // appendMany, IN_FLIGHT / BATCH calls of BATCH events, a new call as soon as one resolves; with
  // append, waves of IN_FLIGHT calls
  if (many) {
    let next = 0;
    const producer = async () => {
      while (next < n) {
        const chunk = [];
        for (const end = Math.min(n, next + BATCH); next < end; next++) chunk.push(input(next));
        await log.appendMany(chunk);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT / BATCH }, producer));
  } else {
    for (let i = 0; i < n;) {
      const wave = [];
      for (const end = Math.min(n, i + IN_FLIGHT); i < end; i++) wave.push(log.append(input(i)));
      await Promise.all(wave);
    }
  }
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  await log.close();
  return { rate: (n / ms) * 1000, cpuRate: n / ((cpu.user + cpu.system) / 1e6), path };
}

try {
  const every = await acpEvery();
  const lines = sampleLines(BATCH);
  const plainEvery = plain(lines, every.n, 1, "plain-every.jsonl");
  const batch = await acpBatch(BATCH_EVENTS, true);
  const each = await acpBatch(BATCH_EVENTS, false);
  const plainBatch = plain(lines, BATCH_EVENTS, BATCH, "plain-batch.jsonl");
  const inputUs = inputCost(BATCH_EVENTS);
  const fmt = (x) => Math.round(x).toLocaleString("en-US").padStart(12);
  process.stdout.write(
    `audit append, events/s (${every.n.toLocaleString("en-US")} events in every mode, ${BATCH_EVENTS.toLocaleString("en-US")} in batch mode)\n\n`,
  );
  process.stdout.write(`mode    ${"acp".padStart(12)} ${"plain file".padStart(12)}   acp / plain\n`);
  process.stdout.write(`every   ${fmt(every.rate)} ${fmt(plainEvery)}   ${(every.rate / plainEvery).toFixed(2)}\n`);
  process.stdout.write(
    `batch   ${fmt(batch.rate)} ${fmt(plainBatch)}   ${(batch.rate / plainBatch).toFixed(2)}   (appendMany, 4096 per call)\n`,
  );
  process.stdout.write(
    `batch   ${fmt(each.rate)} ${fmt(plainBatch)}   ${(each.rate / plainBatch).toFixed(2)}   (append per event)\n`,
  );
  process.stdout.write(
    `batch writer CPU: ${fmt(batch.cpuRate).trim()} events per CPU-second (appendMany), ${fmt(each.cpuRate).trim()} (append per event)\n`,
  );
  process.stdout.write(
    `  (${(1e6 / batch.cpuRate).toFixed(2)} and ${(1e6 / each.cpuRate).toFixed(2)} µs of CPU per event, of which making the bench's input object ${inputUs.toFixed(2)} µs)\n`,
  );
  for (const run of [batch, each]) {
    const { verification: verified } = await store.verifyAuditFile(run.path);
    process.stdout.write(
      `${run.path.endsWith("many.jsonl") ? "appendMany" : "append"} batch log verifies: ${verified.ok} (${verified.count} lines, ${verified.checkpoints} checkpoints)\n`,
    );
  }
  const target = 100_000;
  process.stdout.write(
    `target batch >= ${target.toLocaleString("en-US")} events/s (appendMany): wall ${batch.rate >= target ? "met" : "NOT met"}, ` +
      `per CPU-second ${batch.cpuRate >= target ? "met" : "NOT met"}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
