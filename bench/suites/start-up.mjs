#!/usr/bin/env node
// Start-up: how long until a freshly spawned MCP server answers `tools/list` over stdio — server-everything
// directly, through `acp proxy` as bin/acp.js runs it (the bundle, scripts/bundle-cli.mjs) and through the same
// program module by module (packages/cli/dist/entry.js) — and how long a light command (`acp --version`,
// `acp pending --json`) takes from spawn to exit, bundled and module by module. Runs are interleaved (one of
// each in turn, ACP_BENCH_STARTUP_RUNS rounds, 7 by default); the table gives the median and the ratio to its
// reference (direct for the proxy, the module-by-module acp for a command). Uses the built CLI.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const BUNDLED = join(ROOT, "packages/cli/bin/acp.js");
const MODULES = join(ROOT, "packages/cli/dist/entry.js");
const RUNS = Number(process.env.ACP_BENCH_STARTUP_RUNS ?? 7);

const home = mkdtempSync(join(tmpdir(), "acp-bench-startup-"));
writeFileSync(
  join(home, "policy.yml"),
  'version: "1"\ndefault_action: deny\nrules:\n  - id: echo\n    match: { tool: echo }\n    action: allow\n',
);
const env = { PATH: process.env.PATH ?? "", HOME: home, ACP_HOME: home };

/** Milliseconds from spawning `command args` until its tools/list answer (the tools it listed, checked). */
async function toFirstList(command, args) {
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  const client = new Client({ name: "bench-startup", version: "1" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const ms = performance.now() - started;
  await client.close();
  if (!tools.some((t) => t.name === "echo")) throw new Error(`${command} ${args.join(" ")}: no echo tool listed`);
  return ms;
}

/** Milliseconds from spawning `node program args` until it exits (with status 0, checked). */
function toExit(program, args) {
  const started = performance.now();
  const run = spawnSync(process.execPath, [program, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`acp ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return ms;
}

const proxyArgs = ["proxy", "--upstream", EVERYTHING, "--name", "everything"];
const rows = [
  ["tools/list", "direct", () => toFirstList(EVERYTHING, [])],
  ["tools/list", "acp proxy (modules)", () => toFirstList(process.execPath, [MODULES, ...proxyArgs])],
  ["tools/list", "acp proxy (bundled)", () => toFirstList(process.execPath, [BUNDLED, ...proxyArgs])],
  ["--version", "acp (modules)", () => toExit(MODULES, ["--version"])],
  ["--version", "acp (bundled)", () => toExit(BUNDLED, ["--version"])],
  ["pending --json", "acp (modules)", () => toExit(MODULES, ["pending", "--json"])],
  ["pending --json", "acp (bundled)", () => toExit(BUNDLED, ["pending", "--json"])],
];
const times = rows.map(() => []);
try {
  for (let round = 0; round < RUNS; round++)
    for (const [i, [, , measure]] of rows.entries()) times[i].push(await measure());
} finally {
  rmSync(home, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`start-up, median of ${RUNS} runs (ms); ratio to the first row of its group`);
console.log("what            how                    median ms   ratio");
const first = new Map();
for (const [i, [what, how]] of rows.entries()) {
  const m = median(times[i]);
  if (!first.has(what)) first.set(what, m);
  console.log(
    `${what.padEnd(15)} ${how.padEnd(22)} ${m.toFixed(0).padStart(9)}  ${(m / first.get(what)).toFixed(2).padStart(6)}`,
  );
}
