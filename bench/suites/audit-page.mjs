#!/usr/bin/env node
// An audit page of acp serve (GET /v1/audit, the console's audit page: the 100 newest events) on a log of
// N events (default 100,000, `ACP_BENCH_PAGE_EVENTS`), CPU and wall per page, in one process, the ways
// interleaved, each `ACP_BENCH_PAGE_REPS` times (default 7; least and median CPU):
//   whole      a trail that has not counted this file: the whole file's lines counted, then the page read
//              backwards — what every page did before 26 Nov 2026 (each page counted the whole file)
//   +k new     the same trail's next page after k events were appended: only their bytes are counted
//              (after the check that the last counted line is still at its place)
//   nothing    the same trail's next page with nothing new
// Each continued page's total is checked against the whole count. Needs the built packages
// (`npx tsc -b packages/cli`); writes only into a temporary directory.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const root = new URL("../../", import.meta.url);
const store = await import(new URL("packages/store/dist/index.js", root).href);
const server = await import(new URL("packages/server/dist/index.js", root).href);
const N = Number(process.env.ACP_BENCH_PAGE_EVENTS ?? 100_000);
const REPS = Number(process.env.ACP_BENCH_PAGE_REPS ?? 7);

const input = (i) => ({
  event_type: i % 2 === 0 ? "tool_call_intercepted" : "policy_evaluated",
  request_id: `cr_${i >> 1}`,
  agent: "bench-agent",
  tool: "send_email",
  category: "communication",
  decision: i % 2 === 0 ? null : "accept",
  risk_level: "medium",
  metadata: { to: `user${i % 97}@example.com`, subject: `report ${i}`, body_bytes: 1000 + (i % 500) },
});

const dir = mkdtempSync(join(tmpdir(), "acp-bench-page-"));
const path = join(dir, "audit.jsonl");
let t = Date.UTC(2026, 0, 15);
const log = await store.openAuditLog(path, { clock: () => new Date(t++), fsync: "batch" });
let appended = 0;
async function append(k) {
  for (let done = 0; done < k; done += 5000) {
    await log.appendMany(Array.from({ length: Math.min(5000, k - done) }, (_, i) => input(appended + done + i)));
  }
  appended += k;
}
await append(N);

/** One page: CPU and wall ms, and its total. */
async function page(trail) {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const { total, events } = await trail.list({ limit: 100 });
  const used = process.cpuUsage(cpu);
  if (events.length !== 100) throw new Error(`a page of ${events.length} events`);
  return { cpuMs: (used.user + used.system) / 1000, ms: performance.now() - start, total };
}

const ways = ["whole", "+1000 new", "+10 new", "nothing new"];
const results = Object.fromEntries(ways.map((w) => [w, []]));
const load = [loadavg()];
const trail = server.createFileAuditTrail(path);
await page(trail);
for (let rep = 0; rep < REPS; rep++) {
  for (const way of ways) {
    if (way === "+1000 new") await append(1000);
    if (way === "+10 new") await append(10);
    const r = await page(way === "whole" ? server.createFileAuditTrail(path) : trail);
    const whole = await server.createFileAuditTrail(path).list({ limit: 1 });
    if (r.total !== whole.total) throw new Error(`${way}: total ${r.total}, a whole count says ${whole.total}`);
    results[way].push(r);
  }
}
load.push(loadavg());
await log.close();
const lines = (await server.createFileAuditTrail(path).list({ limit: 1 })).total;
const mb = statSync(path).size / 1e6;
rmSync(dir, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const least = (xs) => Math.min(...xs);
const wholeCpu = median(results.whole.map((r) => r.cpuMs));
console.log(`audit page of 100 events, log of ${lines} lines (${mb.toFixed(0)} MB) at the end; ${REPS} reps each`);
console.log(`load average ${load.map((l) => l.map((x) => x.toFixed(2)).join(" ")).join(" → ")}`);
console.log("| page | CPU ms (least) | CPU ms (median) | wall ms (median) | CPU / whole (median) |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const way of ways) {
  const cpu = results[way].map((r) => r.cpuMs);
  console.log(
    `| ${way} | ${least(cpu).toFixed(2)} | ${median(cpu).toFixed(2)} | ${median(results[way].map((r) => r.ms)).toFixed(2)} | ${(median(cpu) / wholeCpu).toFixed(3)} |`,
  );
}
