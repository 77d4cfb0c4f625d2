#!/usr/bin/env node
// tools/call round trips to server-everything's `echo`, 1 and 8 concurrent clients, p50/p99 latency and
// calls/s, printed as ratios to the direct connection of the same transport in the same run:
//   stdio: direct | a process that only forwards bytes | the proxy core (`createProxy`, accept-all decision, no
//     policy, session runtime or audit: bench/proxy/core-server.mjs) | `acp proxy` (one proxy process per client)
//   (ACP_BENCH_PROXY_BASELINE=<another built checkout> adds `acp baseline`: that build's `acp proxy`, same run)
//   HTTP (downstream): the server's own streamable HTTP | `acp proxy --http` (stdio upstream) | mcp-proxy
//     (streamable HTTP) | supergateway in its default mode (stdio → SSE, one shared server process) and in
//     its stateful streamable HTTP mode (its stateless mode starts a server process per request: not run)
// `acp proxy` runs the allow path with everything on: the pipeline (policy), the session runtime and the
// audit chain in a real ACP home. Every reply is checked against its caller (distinct payloads); a wrong
// or lost reply through ACP (or direct) fails the suite, a peer's is reported. Loopback only: servers that
// would listen on every interface are started with a preload that binds them to 127.0.0.1.
// `cpu µs`: CPU time of the process(es) the clients talk to (server, forwarder or proxy; not the proxy's upstream
// child) per answered call, from /proc. Uses the built CLI (`npm run bench` builds). ACP_BENCH_PROXY_CALLS sets the calls per measurement,
// ACP_BENCH_PROXY_WARMUP the calls every client makes first (500), so each process is measured warm.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "node_modules/.bin");
const EVERYTHING = join(BIN, "mcp-server-everything");
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const PROXY_CORE = join(ROOT, "bench/proxy/core-server.mjs");
const CALLS = Number(process.env.ACP_BENCH_PROXY_CALLS ?? 10000);
/** Calls each client makes before the measurement, so every process it talks to (one proxy per stdio
 * client) is measured warm, not while V8 is still compiling its hot paths (ACP_BENCH_PROXY_WARMUP). */
const WARMUP = Number(process.env.ACP_BENCH_PROXY_WARMUP ?? 500);
/** A reply that does not come within this is counted as lost (a proxy that misroutes replies loses some). */
const CALL_TIMEOUT_MS = 10_000;
/** A measurement stops early after this many lost replies (each costs the whole timeout)... */
const MAX_LOST = 8;
/** ...or after this long (a slow peer is measured on the calls it managed). */
const MAX_SECONDS = Number(process.env.ACP_BENCH_PROXY_SECONDS ?? 30);

// Binds any server that would listen on every interface to 127.0.0.1 (server-everything, supergateway).
const LOOPBACK_PRELOAD = `data:text/javascript,${encodeURIComponent(`
import net from "node:net";
const listen = net.Server.prototype.listen;
const wide = (h) => h === undefined || h === null || h === "" || h === "::" || h === "0.0.0.0";
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (typeof first === "object" && first !== null && "port" in first && wide(first.host))
    args[0] = { ...first, host: "127.0.0.1" };
  else if ((typeof first === "number" || (typeof first === "string" && /^\\d+$/.test(first))) && (typeof second !== "string" || wide(second)))
    args.splice(1, typeof second === "string" ? 1 : 0, "127.0.0.1");
  return listen.apply(this, args);
};`)}`;

const home = mkdtempSync(join(tmpdir(), "acp-bench-proxy-"));
writeFileSync(
  join(home, "policy.yml"),
  'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
);
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  ACP_HOME: home,
  ...(process.env.ACP_BENCH_PROFILE_DIR === undefined
    ? {}
    : { ACP_BENCH_PROFILE_DIR: process.env.ACP_BENCH_PROFILE_DIR }),
  // ACP_BENCH_NODE_OPTIONS adds Node options to every process the clients talk to (Node refuses `--cpu-prof` there:
  // `--import=bench/proxy/profile-preload.mjs` with ACP_BENCH_PROFILE_DIR=DIR profiles each `acp` process)
  NODE_OPTIONS: [`--import=${LOOPBACK_PRELOAD}`, process.env.ACP_BENCH_NODE_OPTIONS ?? ""].join(" ").trim(),
};

// A process that only forwards bytes both ways: the floor of any stdio proxy that is a separate process.
const FORWARDER = `const { spawn } = require("node:child_process");
const child = spawn(process.argv[1], [], { stdio: ["pipe", "pipe", "ignore"] });
process.stdin.pipe(child.stdin); child.stdout.pipe(process.stdout);
process.stdin.on("end", () => child.kill()); child.on("exit", () => process.exit(0));`;

// The least any proxy that reads the messages must do: split lines, JSON.parse each message and write
// JSON.stringify of it, both ways (no SDK, no checks, no decision). What is left between this and the
// byte forwarder is the cost of looking at the traffic at all.
const JSON_FORWARDER = `const { spawn } = require("node:child_process");
const child = spawn(process.argv[1], [], { stdio: ["pipe", "pipe", "ignore"] });
function relay(from, to) {
  let rest = "";
  from.setEncoding("utf8");
  from.on("data", (chunk) => {
    const lines = (rest + chunk).split("\\n");
    rest = lines.pop();
    let out = "";
    for (const line of lines) if (line !== "") out += JSON.stringify(JSON.parse(line)) + "\\n";
    if (out !== "") to.write(out);
  });
}
relay(process.stdin, child.stdin); relay(child.stdout, process.stdout);
process.stdin.on("end", () => child.kill()); child.on("exit", () => process.exit(0));`;

async function stdioClient(command, args) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  await client.connect(transport);
  client.benchPid = transport.pid;
  return client;
}

// CPU time of the process(es) the clients talk to (the server, the forwarder, the proxy — not its upstream child),
// from /proc: it moves much less with the machine's load than calls/s do.
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();
function cpuTicks(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      total += Number(fields[11]) + Number(fields[12]);
    } catch {
      return NaN;
    }
  }
  return total;
}

// the bench's own HTTP clients use the proxy's fetch too: the SDK transports' shared abort signal would
// otherwise collect a listener per call in this process (and Node's "memory leak" warnings) for every peer
const { createAbortIsolatingFetch } = await import(new URL("../../packages/proxy/dist/index.js", import.meta.url).href);

async function httpClient(url) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const u = new URL(url);
  const options = { fetch: createAbortIsolatingFetch() };
  await client.connect(
    u.pathname === "/sse" ? new SSEClientTransport(u, options) : new StreamableHTTPClientTransport(u, options),
  );
  return client;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, child, what, spawnError) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (spawnError() !== undefined) throw new Error(`${what} could not start: ${spawnError().message}`);
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before listening`);
    const open = await new Promise((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within 60 s`);
}

/** Starts one HTTP server process; resolves with its URL (`path`, default /mcp) and a stop function. */
async function startHttp(what, command, args, path = "/mcp") {
  const port = await freePort();
  const child = spawn(command, args(port), { env: { ...env, PORT: String(port) }, stdio: "ignore" });
  let spawnError;
  child.once("error", (err) => (spawnError = err));
  const exited = new Promise((resolve) => {
    child.once("exit", resolve);
    child.once("error", resolve);
  });
  const stop = async () => {
    if (spawnError !== undefined) return;
    if (child.exitCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForPort(port, child, what, () => spawnError);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}${path}`, stop, pid: child.pid };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** `clients` call concurrently; every reply is matched against the payload its caller sent. */
async function measure(clients, calls, tag, pids = []) {
  const ticks = cpuTicks(pids);
  const latencies = [];
  let wrong = 0;
  let lost = 0;
  let firstError;
  let firstWrong;
  const perClient = Math.ceil(calls / clients.length);
  const started = performance.now();
  const deadline = started + MAX_SECONDS * 1000;
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = 0; i < perClient && lost < MAX_LOST && performance.now() < deadline; i++) {
        const message = `${tag}-${c}-${i}-${Math.random().toString(36).slice(2)}`;
        const t = performance.now();
        let result;
        try {
          result = await client.callTool({ name: "echo", arguments: { message } }, undefined, {
            timeout: CALL_TIMEOUT_MS,
          });
        } catch (err) {
          lost++;
          firstError ??= err instanceof Error ? err.message : String(err);
          continue;
        }
        latencies.push(performance.now() - t);
        const text = result.content?.[0]?.type === "text" ? result.content[0].text : undefined;
        if (result.isError === true || text !== `Echo: ${message}`) {
          wrong++;
          firstWrong ??= String(text).slice(0, 300);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const busy = pids.length > 0 ? ((cpuTicks(pids) - ticks) / CLOCK_TICKS) * 1e6 : NaN;
  latencies.sort((a, b) => a - b);
  return {
    cpuUs: busy / Math.max(1, latencies.length),
    p50: percentile(latencies, 50) ?? NaN,
    p99: percentile(latencies, 99) ?? NaN,
    rate: latencies.length / seconds,
    wrong,
    lost,
    calls: latencies.length + lost,
    firstError,
    firstWrong,
    stoppedEarly: lost >= MAX_LOST ? "replies lost" : performance.now() >= deadline ? "time cap" : undefined,
  };
}

async function run(peer, connect, concurrency, serverPids) {
  const clients = [];
  try {
    for (let i = 0; i < concurrency; i++) clients.push(await connect());
    await measure(clients, WARMUP * clients.length, "warm");
    const pids = serverPids ?? clients.map((c) => c.benchPid).filter((p) => p !== undefined);
    return { peer, concurrency, ...(await measure(clients, CALLS, "m", pids)) };
  } catch (err) {
    return { peer, concurrency, failed: err instanceof Error ? err.message : String(err) };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  }
}

async function runHttp(peer, start, concurrency) {
  let server;
  try {
    server = await start();
  } catch (err) {
    return { peer, concurrency, failed: err instanceof Error ? err.message : String(err) };
  }
  try {
    return await run(peer, () => httpClient(server.url), concurrency, server.pid !== undefined ? [server.pid] : []);
  } finally {
    await server.stop();
  }
}

// ACP_BENCH_PROXY_BASELINE=<root of another built checkout> adds an `acp baseline` row beside `acp proxy`
// (that build's packages/cli/bin/acp.js): before and after in the same run, against the same direct row.
const BASELINE = process.env.ACP_BENCH_PROXY_BASELINE;
const ACPS = [["acp proxy", ACP], ...(BASELINE ? [["acp baseline", join(BASELINE, "packages/cli/bin/acp.js")]] : [])];
const STDIO = [
  ["direct", () => stdioClient(EVERYTHING, [])],
  ["byte forwarder", () => stdioClient(process.execPath, ["-e", FORWARDER, EVERYTHING])],
  ["json forwarder", () => stdioClient(process.execPath, ["-e", JSON_FORWARDER, EVERYTHING])],
  ["proxy core", () => stdioClient(process.execPath, [PROXY_CORE, EVERYTHING])],
  ...ACPS.map(([peer, acp]) => [
    peer,
    () => stdioClient(process.execPath, [acp, "proxy", "--upstream", EVERYTHING, "--name", "everything"]),
  ]),
];
const HTTP = [
  ["direct", () => startHttp("server-everything", EVERYTHING, () => ["streamableHttp"])],
  ...ACPS.map(([peer, acp]) => [
    peer,
    () =>
      startHttp(peer, process.execPath, (port) => [
        acp,
        "proxy",
        "--http",
        String(port),
        "--upstream",
        EVERYTHING,
        "--name",
        "everything",
      ]),
  ]),
  [
    "mcp-proxy",
    () =>
      startHttp("mcp-proxy", join(BIN, "mcp-proxy"), (port) => [
        "--port",
        String(port),
        "--host",
        "127.0.0.1",
        "--server",
        "stream",
        "--",
        EVERYTHING,
      ]),
  ],
  [
    "supergateway",
    () =>
      startHttp(
        "supergateway",
        join(BIN, "supergateway"),
        (port) => ["--stdio", EVERYTHING, "--port", String(port), "--logLevel", "none"],
        "/sse",
      ),
  ],
  [
    "supergw stateful",
    () =>
      startHttp("supergateway --stateful", join(BIN, "supergateway"), (port) => [
        "--stdio",
        EVERYTHING,
        "--outputTransport",
        "streamableHttp",
        "--stateful",
        "--port",
        String(port),
        "--logLevel",
        "none",
      ]),
  ],
];

// ACP_BENCH_PROXY_ONLY narrows a run: `stdio`, `http`, a peer (`acp proxy`), `8` clients, or several, comma-separated
const only = (process.env.ACP_BENCH_PROXY_ONLY ?? "").split(",").filter((x) => x !== "");
const CONCURRENCIES = [1, 8].filter((c) => !only.some((o) => /^\d+$/.test(o)) || only.includes(String(c)));
const rows = [];
for (const concurrency of CONCURRENCIES) {
  for (const [transport, list, go] of [
    ["stdio", STDIO, run],
    ["http", HTTP, runHttp],
  ]) {
    for (const [peer, make] of list) {
      const selected = only.filter((o) => !/^\d+$/.test(o));
      if (selected.length > 0 && !selected.includes(transport) && !selected.includes(peer) && peer !== "direct")
        continue;
      if (
        selected.length > 0 &&
        !selected.includes(transport) &&
        !list.some(([p]) => p !== "direct" && selected.includes(p))
      )
        continue;
      rows.push({ transport, ...(await go(peer, make, concurrency)) });
    }
  }
}
rmSync(home, { recursive: true, force: true });

const pad = (v, n) => String(v).padStart(n);
const fixed = (v, d) => (Number.isFinite(v) ? v.toFixed(d) : "-");
console.log(
  `${"transport".padEnd(9)} ${pad("clients", 7)} ${"peer".padEnd(16)} ${pad("calls/s", 8)} ${pad("p50 ms", 7)} ` +
    `${pad("p99 ms", 7)} ${pad("×calls/s", 8)} ${pad("×p50", 6)} ${pad("+p50 ms", 8)} ${pad("wrong", 5)} ${pad("lost", 4)} ` +
    `${pad("cpu µs", 6)}`,
);
let failed = false;
for (const row of rows) {
  const base = rows.find(
    (r) => r.transport === row.transport && r.concurrency === row.concurrency && r.peer === "direct",
  );
  const ours = ["direct", "acp proxy", "acp baseline", "byte forwarder", "json forwarder", "proxy core"].includes(
    row.peer,
  );
  const head = `${row.transport.padEnd(9)} ${pad(row.concurrency, 7)} ${row.peer.padEnd(16)}`;
  if (row.failed !== undefined) {
    console.log(`${head} FAILED: ${row.failed}`);
    failed ||= ours;
    continue;
  }
  const ok = base !== undefined && base.failed === undefined;
  console.log(
    `${head} ${pad(fixed(row.rate, 0), 8)} ${pad(fixed(row.p50, 3), 7)} ${pad(fixed(row.p99, 3), 7)} ` +
      `${pad(ok ? fixed(row.rate / base.rate, 2) : "-", 8)} ${pad(ok ? fixed(row.p50 / base.p50, 2) : "-", 6)} ` +
      `${pad(ok ? fixed(row.p50 - base.p50, 3) : "-", 8)} ${pad(row.wrong, 5)} ${pad(row.lost, 4)} ` +
      `${pad(fixed(row.cpuUs, 0), 6)}` +
      (row.stoppedEarly !== undefined ? `  (stopped early, ${row.stoppedEarly}: ${row.calls} calls)` : "") +
      (row.wrong + row.lost > 0
        ? ours
          ? "  <- WRONG REPLIES (fails the suite)"
          : "  <- replies to the wrong caller"
        : ""),
  );
  if (row.firstWrong !== undefined) console.log(`${" ".repeat(34)}first wrong reply: ${row.firstWrong}`);
  if (row.firstError !== undefined) console.log(`${" ".repeat(34)}first lost reply: ${row.firstError}`);
  failed ||= ours && row.wrong + row.lost > 0;
}
const at = (transport, clients, peer) =>
  rows.find((r) => r.transport === transport && r.concurrency === clients && r.peer === peer);
for (const clients of [1, 8]) {
  const d = at("stdio", clients, "direct");
  const a = at("stdio", clients, "acp proxy");
  if (d?.rate !== undefined && a?.rate !== undefined) {
    const ratio = a.rate / d.rate;
    const added = a.p50 - d.p50;
    console.log(
      `target stdio, ${clients} client(s): ${ratio.toFixed(2)}× direct throughput (≥ 0.65×: ${ratio >= 0.65 ? "met" : "not met"}), ` +
        `+${added.toFixed(3)} ms p50 (≤ 0.15 ms: ${added <= 0.15 ? "met" : "not met"})`,
    );
  }
  const h = at("http", clients, "acp proxy");
  const m = at("http", clients, "mcp-proxy");
  if (h?.rate !== undefined && m?.rate !== undefined) {
    console.log(
      `target http, ${clients} client(s): acp proxy ${(h.rate / m.rate).toFixed(2)}× mcp-proxy's throughput ` +
        `(≥ 1: ${h.rate >= m.rate ? "met" : "not met"})`,
    );
  }
  for (const transport of ["stdio", "http"]) {
    const now = at(transport, clients, "acp proxy");
    const before = at(transport, clients, "acp baseline");
    if (now?.rate !== undefined && before?.rate !== undefined)
      console.log(
        `${transport}, ${clients} client(s): acp proxy ${(now.rate / before.rate).toFixed(2)}× the baseline's throughput, ` +
          `cpu ${fixed(now.cpuUs, 0)} µs a call against ${fixed(before.cpuUs, 0)}`,
      );
  }
}
process.exitCode = failed ? 1 : 0;
