#!/usr/bin/env node
// CPU cost of recording one audit event (µs of process CPU, user + system, per event), three ways:
//
// - `core`:  the CPU steps alone, no file: redact (`redactAuditInput`), canonical JSON staged as bytes
//            (`AuditLineStager`), sealed and hashed (`sealStagedLine`), the serve decision's event.
// - `serve`: what `acp serve` does per decision: the service's audit sink (`createAuditSink`) on the
//            SQLite stores' batched appender (one `appendMany` per event-loop turn) on the JSONL writer
//            (group commit, fsync per batch); 10 decisions per turn, as 10 connections give.
// - `proxy`: what `acp proxy` does per accepted call: 4 events (intercepted, evaluated accept, forwarded,
//            completed) appended one by one to a `batch` writer with a 20 ms commit delay.
//
// `ACP_BENCH_AUDIT_BASELINE=DIR` (a checkout whose packages/{core,store,server}/dist resolve their own
// @acp packages, as for `ACP_BENCH_SERVE_BASELINE`) runs that build too, alternating the two in separate
// processes for `ACP_BENCH_AUDIT_ROUNDS` rounds (default 5; order swapped every round), and prints the
// median µs of each and the median per-round ratio (this / baseline), the number to read on a shared
// machine. Needs the built packages (`npx tsc -b packages/cli`); writes only into temporary directories.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const EVENTS = Number(process.env.ACP_BENCH_AUDIT_RECORD_EVENTS ?? 100_000);
const MODES = (process.env.ACP_BENCH_AUDIT_MODES ?? "core,serve,proxy").split(",");

/** CPU µs per event of the process since `start` (user + system), and of that the system's. */
function perEvent(start, n) {
  const d = process.cpuUsage(start);
  return { us: (d.user + d.system) / n, sys: d.system / n };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** The decision service's `policy_evaluated` fields (decision-service.ts `record`). */
const decisionFields = (i) => ({
  request_id: `dc_0a1b2c3d${i.toString(16).padStart(16, "0")}`,
  agent: "bench-agent",
  tool: "search_docs",
  category: "public_read",
  risk_level: "low",
  decision: "accept",
  policy_rule: "allow-public-read",
  front_end: "pre_tool_check",
  reasons: ["policy:public_read", "contract:ok"],
});

async function child(root, mode) {
  const core = await import(new URL("packages/core/dist/index.js", root).href);
  const store = await import(new URL("packages/store/dist/index.js", root).href);
  const server = await import(new URL("packages/server/dist/index.js", root).href);
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-audit-record-"));
  const { privateKey } = generateKeyPairSync("ed25519");
  try {
    if (mode === "core") return coreCost(core);
    if (mode === "serve") return await serveCost(server, dir, privateKey);
    return await proxyCost(store, dir, privateKey);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Redact, stage, seal: the CPU steps of one event without the file (inputs made beforehand, reused). */
function coreCost(core) {
  const redact = core.createRedactor(core.DEFAULT_REDACTION, { secrets: () => [] });
  const stager = new core.AuditLineStager();
  const RING = 4096;
  const inputs = [];
  const ids = [];
  const stamps = [];
  for (let i = 0; i < RING; i++) {
    const f = decisionFields(i);
    inputs.push({
      event_type: "policy_evaluated",
      request_id: f.request_id,
      agent: f.agent,
      tool: f.tool,
      category: f.category,
      risk_level: f.risk_level,
      decision: f.decision,
      policy_rule: f.policy_rule,
      metadata: { front_end: f.front_end, reasons: f.reasons },
    });
    ids.push(`ae_00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`);
    // a new millisecond every 8 events, as at ~8,000 events/s
    stamps.push(new Date(1_790_000_000_000 + Math.floor(i / 8)).toISOString());
  }
  const run = (n) => {
    let previous = null;
    let lines = core.createStagedAuditLines();
    for (let i = 0; i < n; i++) {
      const r = i % RING;
      if (r === 0) lines = core.createStagedAuditLines();
      const redacted = core.redactAuditInput(inputs[r], redact);
      stager.stage(redacted, ids[r], stamps[r], lines);
      previous = core.sealStagedLine(lines, r, previous);
    }
    return previous;
  };
  run(20_000);
  const start = process.cpuUsage();
  const head = run(EVENTS);
  return { ...perEvent(start, EVENTS), head };
}

/** The service's audit path per decision, through the SQLite stores' batched appender. */
async function serveCost(server, dir, privateKey) {
  const stores = await server.openSqliteStores({
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    clock: () => new Date(),
    auditSigner: privateKey,
  });
  const sink = server.createAuditSink(stores.auditLog);
  const PER_TURN = 10;
  const run = async (n, offset) => {
    let last;
    for (let i = 0; i < n; i += PER_TURN) {
      for (let j = 0; j < PER_TURN; j++) last = sink.record("policy_evaluated", decisionFields(offset + i + j));
      // the service does not wait for accept events, but it bounds how many are unacknowledged
      if ((i / PER_TURN) % 50 === 49) await last;
      else await turn();
    }
    await last;
  };
  await run(20_000, 0);
  const start = process.cpuUsage();
  await run(EVENTS, 20_000);
  await stores.auditLog.flush();
  const cpu = perEvent(start, EVENTS);
  // (ACP_BENCH_AUDIT_VERIFY=0 leaves the check out, for a profile of the recording alone)
  const verified = process.env.ACP_BENCH_AUDIT_VERIFY === "0" ? { ok: true } : await stores.audit.verify();
  await stores.close();
  if (!verified.ok) throw new Error(`chain does not verify: ${JSON.stringify(verified)}`);
  return { ...cpu, count: verified.count };
}

/** `acp proxy`'s four accept-path events per call, appended one by one (not awaited), 20 ms commit delay. */
async function proxyCost(store, dir, privateKey) {
  const log = await store.openAuditLog(join(dir, "audit.jsonl"), {
    clock: () => new Date(),
    fsync: "batch",
    commitDelayMs: 20,
    signer: privateKey,
  });
  const args = "sha256:4f8b42c22dd3729b519ba6f68d2da7cc5b2d606d05daed5ad5128cc03e6c6358";
  const calls = (n, offset) => {
    let last;
    for (let c = 0; c < n; c++) {
      const request_id = `cr_${(offset + c).toString(36).padStart(8, "0")}`;
      const common = { request_id, agent: "claude-code", tool: "echo" };
      log.append({
        event_type: "tool_call_intercepted",
        ...common,
        metadata: { server: "everything", arguments_hash: args },
      });
      log.append({
        event_type: "policy_evaluated",
        ...common,
        category: "other",
        risk_level: "low",
        decision: "accept",
        policy_rule: "default-accept",
        response_time_ms: 0,
        metadata: { reasons: ["policy:default"], server: "everything" },
      });
      log.append({ event_type: "tool_call_forwarded", ...common, metadata: { server: "everything" } });
      last = log.append({
        event_type: "tool_call_completed",
        ...common,
        response_time_ms: 1,
        metadata: { server: "everything", is_error: false, result_bytes: 42 },
      });
    }
    return last;
  };
  const run = async (n, offset) => {
    for (let i = 0; i < n; i += 100) {
      await calls(100, offset + i);
    }
  };
  await run(5_000, 0);
  const start = process.cpuUsage();
  await run(EVENTS / 4, 5_000);
  await log.flush();
  const cpu = perEvent(start, EVENTS);
  await log.close();
  return cpu;
}

// ---- parent ----

if (process.argv[2] === "--child") {
  const [, , , root, mode] = process.argv;
  const result = await child(new URL(`file://${root.replace(/\/?$/, "/")}`), mode);
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

const here = fileURLToPath(new URL("../../", import.meta.url));
const baseline = process.env.ACP_BENCH_AUDIT_BASELINE;
const rounds = baseline ? Number(process.env.ACP_BENCH_AUDIT_ROUNDS ?? 5) : 1;
const script = fileURLToPath(import.meta.url);
const runChild = (root, mode) =>
  JSON.parse(execFileSync(process.execPath, [script, "--child", root, mode], { encoding: "utf8" }));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const f1 = (x) => x.toFixed(2);

process.stdout.write(
  `CPU µs per audit event (user + system), ${EVENTS} events per run, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}\n\n`,
);
for (const mode of MODES) {
  const mine = [];
  const base = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const order = baseline ? (r % 2 === 0 ? ["base", "this"] : ["this", "base"]) : ["this"];
    const got = {};
    for (const which of order) got[which] = runChild(which === "this" ? here : baseline, mode);
    if (mode === "core" && baseline && got.this.head !== got.base.head)
      throw new Error(`core: the builds' chains differ (${got.this.head} vs ${got.base.head})`);
    mine.push(got.this.us);
    if (baseline) {
      base.push(got.base.us);
      ratios.push(got.this.us / got.base.us);
      process.stdout.write(
        `${mode.padEnd(6)} round ${r + 1}: baseline ${f1(got.base.us)} (system ${f1(got.base.sys)})  this ${f1(got.this.us)} (system ${f1(got.this.sys)})  this/baseline ${(got.this.us / got.base.us).toFixed(3)}\n`,
      );
    }
  }
  if (baseline) {
    process.stdout.write(
      `${mode.padEnd(6)} median: baseline ${f1(median(base))} µs, this ${f1(median(mine))} µs, median ratio ${median(ratios).toFixed(3)} (${ratios
        .map((x) => x.toFixed(2))
        .join(" ")}); load ${loadavg()[0].toFixed(1)}\n`,
    );
  } else process.stdout.write(`${mode.padEnd(6)} ${f1(mine[0])} µs per event\n`);
}
