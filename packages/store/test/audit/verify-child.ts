// Spawned by verify-memory.test.ts under a small heap: verifies a log file streaming ("stream") or read
// whole as the verifier used to ("whole"), and prints the result and the peak RSS as one JSON line.
import { readFileSync } from "node:fs";
import { verifyAuditChain } from "@acp/core";
import { verifyAuditFile } from "../../src/audit/verify-file.js";

const [path = "", mode = "stream"] = process.argv.slice(2);
const verification =
  mode === "whole"
    ? verifyAuditChain(readFileSync(path, "utf8").trimEnd().split("\n"))
    : (await verifyAuditFile(path)).verification;
const { ok, count, problem } = verification;
// VmHWM: this process's own peak (resourceUsage().maxRSS carries over the spawning process's across fork and exec)
const peakKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? Number.NaN);
process.stdout.write(`${JSON.stringify({ ok, count, problem, maxRssMB: peakKb / 1024 })}\n`);
