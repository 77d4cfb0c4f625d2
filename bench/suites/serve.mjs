#!/usr/bin/env node
// `acp serve` throughput: POST /pre-tool-check (the document's public-read event, bearer token, the
// starter policy, every decision appended to the hash-chained audit log) with autocannon at 1, 10 and
// 100 connections, in the same run on:
//   sqlite    the default state (state.db + audit.jsonl, audit fsync by group commit)
//   postgres  the multi-node state (one PostgreSQL database: audit chain appended under one serialised
//             transaction per batch)
//   bare      a bare Fastify route returning the same envelope (what the HTTP stack alone costs)
//   http      the sqlite server with the decision precomputed: acp's HTTP layer (bearer guard, security
//             headers, routing, parse, serialisation) without the decision and its audit record
// Prints requests/s and p99 per row and the ratios sqlite/bare and postgres/sqlite. Each server runs in
// its own process (this file with `--child …`), so autocannon does not share its event loop.
// PostgreSQL: $ACP_BENCH_POSTGRES_URL (a database the bench may create databases on), else a throwaway
// cluster from scripts/postgres.sh (Debian's postgresql; that cluster runs with fsync=off, so its numbers
// are an upper bound). Without either the postgres column says why and the rest still runs;
// ACP_BENCH_SERVE_POSTGRES=0 leaves it out.
// Needs the built packages (`npx tsc -b packages/cli`); writes only into temporary directories.
// Before/after: $ACP_BENCH_SERVE_BASELINE names another build's checkout (a directory with
// packages/{core,store,server}/dist that resolve their own @acp packages); its sqlite server runs as row
// `baseline` in the same run, measured right after this build's sqlite server in every cell.
import { execFileSync, fork } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import Fastify from "fastify";

const BASELINE = process.env.ACP_BENCH_SERVE_BASELINE;
// a `baseline` child loads the other build's packages; everything else loads this checkout's
const root =
  process.argv[2] === "--child" && process.argv[3] === "baseline"
    ? new URL(`file://${BASELINE.replace(/\/?$/, "/")}`)
    : new URL("../../", import.meta.url);
const core = await import(new URL("packages/core/dist/index.js", root).href);
const store = await import(new URL("packages/store/dist/index.js", root).href);
const server = await import(new URL("packages/server/dist/index.js", root).href);

const DURATION = Number(process.env.ACP_BENCH_SERVE_SECONDS ?? 5);
const CONNECTIONS = [1, 10, 100];
const TOKEN = "bench-token";
const EVENT = JSON.stringify({
  tool_name: "search_docs",
  tool_category: "public_read",
  authorization_state: "none",
  evidence_refs: [],
  risk_domain: "research",
  proposed_arguments: { query: "Agent Action Contract v1" },
  recommended_route: "accept",
});

function pipeline(rateLimiter = core.createMemoryRateLimiter()) {
  const parsed = core.parsePolicy(store.STARTER_POLICY, { file: "policy.yml" });
  const sources = [core.policySource(core.compilePolicy(parsed.value), { rateLimiter }), core.contractSource()];
  return core.createPipeline(sources, { classify: parsed.value.classify });
}

async function load(url, connections, duration = DURATION) {
  const result = await autocannon({
    url: `${url}/pre-tool-check`,
    method: "POST",
    connections,
    duration,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: EVENT,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

/** Runs a load cell and measures the server process's CPU time per answered request (µs). */
async function measure(srv, connections, duration = DURATION) {
  const before = (await srv.ask("cpu")).cpu;
  const r = await load(srv.url, connections, duration);
  const after = (await srv.ask("cpu")).cpu;
  const us = after.user - before.user + (after.system - before.system);
  return { ...r, cpuUs: r.total > 0 ? us / r.total : null };
}

async function bare() {
  const app = Fastify({ logger: false });
  const envelope = core.checkToolPrecheck(JSON.parse(EVENT));
  app.post("/pre-tool-check", async () => envelope);
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { url: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close(), verify: async () => null };
}

async function acpServer(dir, storageUrl, httpOnly = false) {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicKeyHex = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");
  const acp = await server.openEmbeddedServer({
    statePath: join(dir, "state.db"),
    auditPath: join(dir, "audit.jsonl"),
    ...(storageUrl !== undefined ? { storageUrl } : {}),
    pipeline: (rateLimiter) => pipeline(rateLimiter),
    simulationPipeline: pipeline(),
    // the starter policy names no server: a caller whose server is only its word is judged as named (ADR 0006)
    anyServerPipeline: (rateLimiter) => pipeline(rateLimiter),
    anyServerRecheckPipeline: pipeline(),
    keys: { privateKey, publicKey, publicKeyHex },
    clock: () => new Date(),
    token: TOKEN,
    loopbackOnly: true,
  });
  if (httpOnly) {
    // the route calls service.preToolCheck at request time: answer every request with one decision
    const service = acp.server.service;
    const fixed = await service.preToolCheck(JSON.parse(EVENT), "pre_tool_check");
    service.preToolCheck = () => Promise.resolve(fixed);
  }
  const url = await acp.server.listen({ port: 0, host: "127.0.0.1" });
  return {
    url,
    close: () => acp.close(),
    verify: async () => {
      await acp.stores.auditLog.flush();
      const v = await acp.stores.audit.verify();
      return { ok: v.ok, count: v.count };
    },
  };
}

/** Child mode: serve, report the URL, answer `verify`, exit on `close`. */
async function child(kind, storageUrl) {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-serve-"));
  const s =
    kind === "bare"
      ? await bare()
      : await acpServer(dir, kind === "postgres" ? storageUrl : undefined, kind === "http");
  // kind `baseline`: the sqlite server of $ACP_BENCH_SERVE_BASELINE's build (loaded above)
  process.send({ url: s.url });
  process.on("message", async (m) => {
    if (m === "verify") process.send({ verified: await s.verify() });
    if (m === "cpu") process.send({ cpu: process.cpuUsage() });
    if (m === "close") {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

/** Starts a server process; resolves with its URL and a way to ask it things. */
async function start(kind, storageUrl) {
  const args = ["--child", kind, ...(storageUrl !== undefined ? [storageUrl] : [])];
  const proc = fork(fileURLToPath(import.meta.url), args, { stdio: "inherit" });
  const [ready] = await Promise.race([
    once(proc, "message"),
    once(proc, "exit").then(([code]) => {
      throw new Error(`the ${kind} server exited (${code}) before listening`);
    }),
  ]);
  return {
    url: ready.url,
    ask: async (m) => {
      proc.send(m);
      const [answer] = await once(proc, "message");
      return answer;
    },
    close: async () => {
      proc.send("close");
      await once(proc, "exit");
    },
  };
}

/** A fresh database for the run: on $ACP_BENCH_POSTGRES_URL, or on a throwaway cluster. */
async function benchDatabase() {
  const script = fileURLToPath(new URL("../../scripts/postgres.sh", import.meta.url));
  let admin = process.env.ACP_BENCH_POSTGRES_URL;
  let cluster = null;
  let note = "$ACP_BENCH_POSTGRES_URL";
  if (admin === undefined || admin === "") {
    cluster = mkdtempSync(join(tmpdir(), "acp-bench-pg-"));
    const out = execFileSync("bash", [script, "start", cluster], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    admin = out.trim().split("\n").pop();
    note = "scripts/postgres.sh cluster, fsync=off";
  }
  const pg = (await import("pg")).default;
  const name = `acp_bench_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    note,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await c.end();
      if (cluster !== null) {
        execFileSync("bash", [script, "stop", cluster], { stdio: "ignore" });
        rmSync(cluster, { recursive: true, force: true });
      }
    },
  };
}

/** The machine's CPU time counters (`/proc/stat`): what share of it a hypervisor took (steal) while we ran. */
function cpuTimes() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    return { steal: f[7] ?? 0, total: f.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

const WARMUP_SECONDS = Number(process.env.ACP_BENCH_SERVE_WARMUP ?? 2);

const fmt = (x) => (x === null ? "-" : Math.round(x).toLocaleString("en-US"));
const ratio = (a, b) => (a === null || b === null || b === 0 ? "-" : (a / b).toFixed(2));

async function main() {
  let db = null;
  let pgWhy = null;
  try {
    if (process.env.ACP_BENCH_SERVE_POSTGRES === "0") throw new Error("ACP_BENCH_SERVE_POSTGRES=0");
    db = await benchDatabase();
  } catch (err) {
    pgWhy = err instanceof Error ? err.message.split("\n")[0] : String(err);
  }
  // the baseline first: a build that cannot serve stops the run before the other servers start
  const baseline = BASELINE !== undefined && BASELINE !== "" ? await start("baseline") : undefined;
  const servers = { sqlite: await start("sqlite"), bare: await start("bare"), http: await start("http") };
  if (db !== null) servers.postgres = await start("postgres", db.url);
  if (baseline !== undefined) servers.baseline = baseline;
  try {
    process.stdout.write(
      `POST /pre-tool-check, ${DURATION}s per cell, each server in its own process, every decision in the audit chain\n` +
        `sqlite: state.db + audit.jsonl (fsync by group commit); postgres: ${db === null ? `not run (${pgWhy})` : db.note}\n\n`,
    );
    const head = [
      "conns",
      "sqlite req/s",
      "p99 ms",
      "cpu µs",
      "postgres req/s",
      "p99 ms",
      "cpu µs",
      "bare req/s",
      "p99 ms",
      "cpu µs",
      "http cpu µs",
      "sqlite/bare",
      "pg/sqlite",
    ];
    const widths = [5, 12, 6, 6, 14, 6, 6, 10, 6, 6, 11, 11, 9];
    const us = (x) => (x === null || x === undefined ? "-" : Math.round(x));
    const row = (cells) => cells.map((c, i) => String(c).padStart(widths[i])).join("  ") + "\n";
    // every server answers for a while before it is measured: the JIT and the heap settle, the first cell
    // is not the cold start
    for (const s of Object.values(servers)) if (WARMUP_SECONDS > 0) await load(s.url, 10, WARMUP_SECONDS);
    const times0 = cpuTimes();
    process.stdout.write(row(head));
    const baseRows = [];
    let best = 0;
    for (const connections of CONNECTIONS) {
      const s = await measure(servers.sqlite, connections);
      if (servers.baseline !== undefined) {
        const base = await measure(servers.baseline, connections);
        baseRows.push({ connections, base, s });
      }
      const p = servers.postgres === undefined ? null : await measure(servers.postgres, connections);
      const b = await measure(servers.bare, connections);
      const h = await measure(servers.http, connections);
      best = Math.max(best, s.rps);
      process.stdout.write(
        row([
          connections,
          fmt(s.rps),
          s.p99,
          us(s.cpuUs),
          fmt(p?.rps ?? null),
          p?.p99 ?? "-",
          us(p?.cpuUs),
          fmt(b.rps),
          b.p99,
          us(b.cpuUs),
          us(h.cpuUs),
          ratio(s.rps, b.rps),
          ratio(p?.rps ?? null, s.rps),
        ]),
      );
    }
    if (baseRows.length > 0) {
      process.stdout.write(`\nbaseline = sqlite server of ${BASELINE}, measured right after sqlite in each cell\n`);
      process.stdout.write("conns  baseline req/s  p99 ms  cpu µs  sqlite cpu µs  sqlite/baseline cpu\n");
      for (const { connections, base, s } of baseRows) {
        process.stdout.write(
          `${String(connections).padStart(5)}  ${fmt(base.rps).padStart(14)}  ${String(base.p99).padStart(6)}  ` +
            `${String(us(base.cpuUs)).padStart(6)}  ${String(us(s.cpuUs)).padStart(13)}  ${ratio(s.cpuUs, base.cpuUs).padStart(19)}\n`,
        );
      }
    }
    const rounds = Number(process.env.ACP_BENCH_SERVE_ROUNDS ?? 0);
    if (servers.baseline !== undefined && rounds > 0) {
      process.stdout.write(
        `\nalternated rounds (${rounds} x 3 s per build and connection count, order swapped each round)\n`,
      );
      process.stdout.write("conns  baseline cpu µs  sqlite cpu µs  median ratio  baseline req/s  sqlite req/s\n");
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      for (const connections of CONNECTIONS) {
        const base = [];
        const mine = [];
        for (let i = 0; i < rounds; i++) {
          const order = i % 2 === 0 ? ["baseline", "sqlite"] : ["sqlite", "baseline"];
          for (const kind of order)
            (kind === "baseline" ? base : mine).push(await measure(servers[kind], connections, 3));
        }
        const ratios = mine.map((m, i) => m.cpuUs / base[i].cpuUs);
        process.stdout.write(
          `${String(connections).padStart(5)}  ${String(us(median(base.map((b) => b.cpuUs)))).padStart(15)}  ` +
            `${String(us(median(mine.map((m) => m.cpuUs)))).padStart(13)}  ${median(ratios).toFixed(2).padStart(12)}  ` +
            `${fmt(median(base.map((b) => b.rps))).padStart(14)}  ${fmt(median(mine.map((m) => m.rps))).padStart(12)}\n`,
        );
      }
    }
    for (const kind of ["sqlite", "baseline", "postgres"]) {
      if (servers[kind] === undefined) continue;
      const { verified } = await servers[kind].ask("verify");
      process.stdout.write(
        `${kind} audit chain verifies: ${verified.ok} (${verified.count.toLocaleString("en-US")} events)\n`,
      );
    }
    const times1 = cpuTimes();
    const steal =
      times0 !== null && times1 !== null && times1.total > times0.total
        ? `${(((times1.steal - times0.steal) / (times1.total - times0.total)) * 100).toFixed(0)}%`
        : "unknown";
    process.stdout.write(
      `target >= 10,000 req/s with SQLite: ${best >= 10_000 ? "met" : "NOT met"} (best ${fmt(best)}); ` +
        `cpu µs = server CPU time per answered request; http = acp's HTTP layer with the decision precomputed; ` +
        `each server warmed up ${WARMUP_SECONDS} s at 10 connections first; ` +
        `load average at the end: ${loadavg()[0].toFixed(1)}; CPU time taken by the hypervisor (steal) during the cells: ${steal}\n`,
    );
  } finally {
    for (const s of Object.values(servers)) await s.close();
    await db?.drop();
  }
}

if (process.argv[2] === "--child") await child(process.argv[3], process.argv[4]);
else await main();
