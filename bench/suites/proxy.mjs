#!/usr/bin/env node
// tools/call round trips to server-everything's `echo` over stdio: straight to the server, and through
// `acp proxy` on the allow path with the pipeline, the session runtime and the audit chain (fsync every)
// on — 1 and 8 concurrent clients, p50/p99 latency and calls/s, as ratios. Every reply is checked
// against its request (a wrong reply fails the suite). Uses the built CLI (`npm run bench` builds).
// Peers not yet measured here: mcp-proxy and supergateway (HTTP); see bench/README.md.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const CALLS = Number(process.env.ACP_BENCH_PROXY_CALLS ?? 2000);

async function connect(command, args, env) {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env, stderr: "ignore" }));
  return client;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(clients) {
  const latencies = [];
  let wrong = 0;
  const perClient = Math.ceil(CALLS / clients.length);
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = 0; i < perClient; i++) {
        const message = `m-${c}-${i}`;
        const t = performance.now();
        const result = await client.callTool({ name: "echo", arguments: { message } });
        latencies.push(performance.now() - t);
        if (!JSON.stringify(result.content).includes(message)) wrong++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rate: latencies.length / seconds, wrong };
}

async function run(label, make, concurrency) {
  const clients = [];
  for (let i = 0; i < concurrency; i++) clients.push(await make());
  await measure(clients.slice(0, 1)); // warm-up
  const result = await measure(clients);
  await Promise.all(clients.map((c) => c.close()));
  return { label, concurrency, ...result };
}

const home = mkdtempSync(join(tmpdir(), "acp-bench-proxy-"));
writeFileSync(
  join(home, "policy.yml"),
  'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
);
const env = { PATH: process.env.PATH ?? "", HOME: home, ACP_HOME: home };
const direct = () => connect(EVERYTHING, [], env);
const proxied = () => connect(process.execPath, [ACP, "proxy", "--upstream", EVERYTHING, "--name", "everything"], env);

const rows = [];
let failed = false;
for (const concurrency of [1, 8]) {
  const d = await run("direct", direct, concurrency);
  const p = await run("acp proxy", proxied, concurrency);
  rows.push(d, p);
  failed ||= d.wrong > 0 || p.wrong > 0;
  console.log(
    `${concurrency} client(s): direct ${d.rate.toFixed(0)} calls/s p50 ${d.p50.toFixed(3)} ms p99 ${d.p99.toFixed(3)} ms | ` +
      `acp proxy ${p.rate.toFixed(0)} calls/s p50 ${p.p50.toFixed(3)} ms p99 ${p.p99.toFixed(3)} ms | ` +
      `throughput ratio ${(p.rate / d.rate).toFixed(2)}x, added p50 ${(p.p50 - d.p50).toFixed(3)} ms` +
      (d.wrong + p.wrong > 0 ? ` | WRONG REPLIES: ${d.wrong + p.wrong}` : ""),
  );
}
rmSync(home, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
