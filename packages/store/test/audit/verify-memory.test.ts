import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHomes } from "./audit-fixture.js";
import { writeChain } from "./chain-file.js";

const homes = tempHomes();
afterAll(homes.cleanup);
let childScript = "";

beforeAll(async () => {
  childScript = join(homes.make(), "verify-child.mjs");
  await build({
    entryPoints: [fileURLToPath(new URL("./verify-child.ts", import.meta.url))],
    outfile: childScript,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    alias: { "@acp/core": fileURLToPath(new URL("../../../core/src/index.ts", import.meta.url)) },
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
    logLevel: "error",
  });
});

/** Runs the child under a 64 MB heap; resolves with its exit code and what it printed. */
function verifyIn64MB(path: string, mode: "stream" | "whole"): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--max-old-space-size=64", childScript, path, mode], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), out }));
  });
}

describe("verifying a log larger than the heap", () => {
  it("verifies 200,000 events (about 130 MB) under a 64 MB heap, where reading the file whole runs out of memory", async () => {
    const path = join(homes.make(), "audit.jsonl");
    const { head } = writeChain(path, 200_000, { keep: 0 });
    expect(statSync(path).size).toBeGreaterThan(120 * 1024 * 1024);
    const [stream, whole] = await Promise.all([verifyIn64MB(path, "stream"), verifyIn64MB(path, "whole")]);
    expect(stream.code).toBe(0);
    expect(JSON.parse(stream.out)).toMatchObject({ ok: true, count: 200_000, problem: null });
    expect(head).not.toBeNull();
    // the old way (the file as one string, split into an array of lines) does not fit in that heap
    expect(whole.code).not.toBe(0);
    expect(whole.out).toBe("");
  }, 120_000);
});
