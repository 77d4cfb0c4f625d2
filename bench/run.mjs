#!/usr/bin/env node
// `npm run bench`: runs every suite in bench/suites/ in its own process, one after another,
// so suites never share a heap or a core. Each suite prints its own table with ratios to its peers.
// Pass suite names to run only those: `npm run bench -- policy`.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const dir = fileURLToPath(new URL("./suites/", import.meta.url));
const only = process.argv.slice(2);
const suites = readdirSync(dir)
  .filter((f) => f.endsWith(".mjs"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const suite of suites) {
  process.stdout.write(`\n=== ${suite} ===\n`);
  const r = spawnSync(process.execPath, [join(dir, suite)], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
if (suites.length === 0) process.stdout.write("no benchmark suites found\n");
process.exitCode = failed === 0 ? 0 : 1;
