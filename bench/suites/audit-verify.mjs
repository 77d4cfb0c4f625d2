#!/usr/bin/env node
// Audit chain verification: time, CPU and peak memory of verifying one audit.jsonl of N events (default
// 100,000; signed checkpoint every 1000, the anchor beside it), each way in its own child process (peak
// RSS is per process), in the same run:
//   before     the file read whole, split, and the verifier as it was before 26 Nov 2026 (a set of every
//              hash; packages/core/test/audit/legacy/verify-chain.ts, bundled here with esbuild)
//   array      the file read whole and split, today's verifier (verifyAuditChain over the array)
//   stream     today's verifier fed line by line (verifyAuditFile: one 256 KiB chunk and one line held)
//   serve      what acp serve does (createFileAuditTrail): a first verification (whole), then 1000 events
//              appended and verified again (continued: only those are read), then once more with nothing new
//   page-before / page   one page of the 100 newest events (GET /v1/audit, the console's list): the whole
//              file read and split as before, and now (counted in chunks, read backwards; page loads
//              @acp/server)
//   baseline   @acp/core and @acp/store loaded, nothing verified (the RSS the first three start from;
//              serve also loads @acp/server)
// Prints wall ms, CPU ms (user + system of the child), µs of CPU per event, peak RSS. Needs the built
// packages (`npx tsc -b packages/cli`); writes only into a temporary directory.
import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import {
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";

const root = new URL("../../", import.meta.url);
const core = await import(new URL("packages/core/dist/index.js", root).href);
const N = Number(process.env.ACP_BENCH_VERIFY_EVENTS ?? 100_000);
const APPENDED = 1000;
const REPS = Number(process.env.ACP_BENCH_VERIFY_REPS ?? 3);
const [, , mode, path, legacyPath, keyFile] = process.argv;

function usage(start, cpuStart) {
  const cpu = process.cpuUsage(cpuStart);
  return {
    ms: performance.now() - start,
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssMB: process.resourceUsage().maxRSS / 1024,
  };
}

/** Child: one way of verifying; prints one JSON line. */
async function child() {
  const store = await import(new URL("packages/store/dist/index.js", root).href);
  // the service's modules (fastify…) only where they are used: they take more heap than the verifier
  const server =
    mode === "serve" || mode === "page" ? await import(new URL("packages/server/dist/index.js", root).href) : null;
  const { privateKey, publicHex } = JSON.parse(readFileSync(keyFile, "utf8"));
  const anchor = store.readAnchor(path);
  const options = { publicKey: publicHex, anchor };
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const whole = () => {
    const lines = readFileSync(path, "utf8").split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines;
  };
  let result;
  const extra = {};
  if (mode === "before") {
    const { legacyVerifyAuditChain } = await import(legacyPath);
    result = legacyVerifyAuditChain(whole(), options);
  } else if (mode === "array") {
    result = core.verifyAuditChain(whole(), options);
  } else if (mode === "stream") {
    result = (await store.verifyAuditFile(path, options)).verification;
  } else if (mode === "page-before") {
    // the listing as it was: the whole file read and split for a page of the 100 newest events
    const lines = (await readFile(path, "utf8")).split("\n");
    if (lines.at(-1) === "") lines.pop();
    const events = [];
    for (let i = lines.length - 1; i >= 0 && events.length < 100; i--) {
      const parsed = core.parseAuditLine(lines[i]);
      if (parsed.ok) events.push(parsed.value);
    }
    result = { ok: events.length === 100, count: lines.length };
  } else if (mode === "page") {
    const page = await server.createFileAuditTrail(path).list({ limit: 100 });
    result = { ok: page.events.length === 100, count: page.total };
  } else if (mode === "serve") {
    // on a copy: the events appended here must not reach the other runs' file
    const copy = `${path}.serve-${process.pid}.jsonl`;
    copyFileSync(path, copy);
    if (anchor !== undefined) copyFileSync(store.anchorPathOf(path), store.anchorPathOf(copy));
    const trail = server.createFileAuditTrail(copy, { publicKey: publicHex });
    result = await trail.verify();
    const first = usage(start, cpuStart);
    let t = Date.UTC(2026, 1, 1);
    const { createPrivateKey } = await import("node:crypto");
    const signer = createPrivateKey({ key: Buffer.from(privateKey, "base64"), format: "der", type: "pkcs8" });
    const log = await store.openAuditLog(copy, { clock: () => new Date(t++), signer, fsync: "batch" });
    await log.appendMany(Array.from({ length: APPENDED }, (_, i) => inputOf(N + i)));
    await log.close();
    const s2 = performance.now();
    const c2 = process.cpuUsage();
    const continued = await trail.verify();
    const second = usage(s2, c2);
    const s3 = performance.now();
    const c3 = process.cpuUsage();
    const again = await trail.verify();
    const third = usage(s3, c3);
    Object.assign(extra, {
      first,
      continued: { ...second, ok: continued.ok, count: continued.count },
      nothingNew: { ...third, ok: again.ok, count: again.count },
    });
    for (const f of [copy, store.anchorPathOf(copy)]) rmSync(f, { force: true });
  }
  process.stdout.write(
    `${JSON.stringify({ ...usage(start, cpuStart), ok: result?.ok ?? null, count: result?.count ?? 0, ...extra })}\n`,
  );
}

function inputOf(i) {
  return {
    event_type: i % 2 === 0 ? "tool_call_intercepted" : "policy_evaluated",
    request_id: `cr_${i >> 1}`,
    agent: "bench-agent",
    tool: "send_email",
    category: "communication",
    decision: i % 2 === 0 ? null : "ask",
    policy_rule: i % 2 === 0 ? null : "ask-before-send",
    metadata: { parameters: { to: "someone@example.com", subject: `report ${i}`, body_bytes: 2048 } },
  };
}

/** Writes a chain of `n` events with a signed checkpoint every 1000 and the anchor beside it. */
function writeLog(file, n, privateKey) {
  const fd = openSync(file, "w", 0o600);
  let previous = null;
  let count = 0;
  let batch = [];
  let anchor = null;
  const add = (input, timestamp) => {
    const body = core.createAuditEventBody(input, { id: `ae_${count}`, timestamp, previousEventHash: previous });
    const sealed = core.sealAuditLine(body);
    previous = sealed.event.event_hash;
    count++;
    batch.push(sealed.line);
    return sealed.line;
  };
  for (let i = 0; i < n; i++) {
    const timestamp = new Date(Date.UTC(2026, 0, 15) + i).toISOString();
    add(inputOf(i), timestamp);
    if ((i + 1) % 1000 === 0) {
      const cp = core.createCheckpointBody(previous, count, timestamp);
      anchor = add(core.createCheckpointInput({ body: cp, signature: core.signCheckpoint(cp, privateKey) }), timestamp);
    }
    if (batch.length >= 4096) {
      writeSync(fd, `${batch.join("\n")}\n`);
      batch = [];
    }
  }
  if (batch.length > 0) writeSync(fd, `${batch.join("\n")}\n`);
  closeSync(fd);
  if (anchor !== null) writeFileSync(`${file}.checkpoint`, `${anchor}\n`);
  return count;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-verify-"));
  try {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const publicHex = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");
    const keyFile = join(dir, "key.json");
    const der = privateKey.export({ format: "der", type: "pkcs8" }).toString("base64");
    writeFileSync(keyFile, JSON.stringify({ privateKey: der, publicHex }));
    const legacy = join(dir, "legacy-verify.mjs");
    const { build } = await import("esbuild");
    await build({
      entryPoints: [fileURLToPath(new URL("packages/core/test/audit/legacy/verify-chain.ts", root))],
      outfile: legacy,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "error",
    });
    const file = join(dir, "audit.jsonl");
    const lines = writeLog(file, N, privateKey);
    const bytes = readFileSync(file).length;
    const spawn = (m, flags = []) =>
      spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), m, file, legacy, keyFile], {
        encoding: "utf8",
      });
    const once = (m) => {
      const r = spawn(m);
      if (r.status !== 0) throw new Error(`${m}: exit ${r.status}\n${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    // each way REPS times, interleaved; the least CPU and wall of the runs, the largest peak RSS
    const results = {};
    for (let rep = 0; rep < REPS; rep++) {
      for (const m of ["baseline", "before", "array", "stream", "serve", "page-before", "page"]) {
        const r = once(m);
        const had = results[m];
        results[m] =
          had === undefined
            ? r
            : { ...(r.cpuMs < had.cpuMs ? r : had), ms: Math.min(r.ms, had.ms), rssMB: Math.max(r.rssMB, had.rssMB) };
      }
    }
    // the heap each way needs: under a small old space, the stream passes; the whole file does not fit
    const small = (m, mb) => {
      const r = spawn(m, [`--max-old-space-size=${mb}`]);
      return r.status === 0
        ? `ok (${JSON.parse(r.stdout).count} lines, peak RSS ${JSON.parse(r.stdout).rssMB.toFixed(0)} MB)`
        : `fails (${r.signal ?? `exit ${r.status}`}: out of memory)`;
    };
    const heaps = [
      ["baseline", 16],
      ["stream", 16],
      ["stream", 24],
      ["stream", 32],
      ["before", 64],
      ["array", 64],
      ["before", 128],
    ].map(([m, mb]) => `${m.padEnd(7)} with --max-old-space-size=${String(mb).padEnd(4)} ${small(m, mb)}`);
    const fmt = (x, d = 0) => x.toFixed(d).padStart(8);
    process.stdout.write(
      `audit chain verification: ${N.toLocaleString("en-US")} events + ${lines - N} checkpoints, ` +
        `${(bytes / 1048576).toFixed(0)} MB, signatures checked\n\n`,
    );
    process.stdout.write(
      `(best of ${REPS} runs each; load: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})\n\n`,
    );
    process.stdout.write(`way                      wall ms   CPU ms  µs CPU/line  peak RSS MB   ok\n`);
    const row = (name, r, perLines) =>
      process.stdout.write(
        `${name.padEnd(24)} ${fmt(r.ms)} ${fmt(r.cpuMs)} ${(perLines === 0 ? "" : fmt((r.cpuMs * 1000) / perLines, 2)).padStart(12)} ${fmt(r.rssMB).padStart(12)}   ${r.ok ?? ""}\n`,
      );
    process.stdout.write(
      `baseline (modules loaded)                                 ${fmt(results.baseline.rssMB).padStart(12)}\n`,
    );
    row("before (whole + seen)", results.before, lines);
    row("array (whole, new)", results.array, lines);
    row("stream (line by line)", results.stream, lines);
    row("serve: first request", results.serve.first, lines);
    row(`serve: +${APPENDED} continued`, results.serve.continued, APPENDED);
    row("serve: nothing new", results.serve.nothingNew, 0);
    row("page of 100: before", results["page-before"], 0);
    row("page of 100: backward", results.page, 0);
    const b = results.before;
    const s = results.stream;
    process.stdout.write(
      `\nstream / before: wall ${(s.ms / b.ms).toFixed(2)}, CPU ${(s.cpuMs / b.cpuMs).toFixed(2)}, ` +
        `peak RSS above baseline ${((s.rssMB - results.baseline.rssMB) / (b.rssMB - results.baseline.rssMB)).toFixed(3)} ` +
        `(${(s.rssMB - results.baseline.rssMB).toFixed(0)} vs ${(b.rssMB - results.baseline.rssMB).toFixed(0)} MB)\n`,
    );
    process.stdout.write(
      `continued request / whole verification (CPU): ${(results.serve.continued.cpuMs / results.serve.first.cpuMs).toFixed(4)} ` +
        `(counts: ${results.serve.continued.count}, ${results.serve.nothingNew.count})\n`,
    );
    process.stdout.write(
      `\nheap needed (${(bytes / 1048576).toFixed(0)} MB file):\n${heaps.map((h) => `  ${h}\n`).join("")}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (mode === undefined) await main();
else if (mode === "baseline") {
  await import(new URL("packages/store/dist/index.js", root).href);
  const cpu = process.cpuUsage();
  process.stdout.write(
    `${JSON.stringify({ ms: 0, cpuMs: (cpu.user + cpu.system) / 1000, rssMB: process.resourceUsage().maxRSS / 1024, ok: null, count: 0 })}\n`,
  );
} else await child();
