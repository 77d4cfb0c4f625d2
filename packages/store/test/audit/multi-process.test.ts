import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, tempHomes, verifyFile } from "./audit-fixture.js";

const homes = tempHomes();
afterAll(homes.cleanup);
let childScript = "";
let keyPath = "";

beforeAll(async () => {
  childScript = join(homes.make(), "append-child.mjs");
  // both processes sign with one key, as the processes of one home do
  keyPath = join(homes.make(), "audit.key");
  const { privateKey } = generateKeyPairSync("ed25519");
  writeFileSync(keyPath, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  await build({
    entryPoints: [fileURLToPath(new URL("./append-child.ts", import.meta.url))],
    outfile: childScript,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["better-sqlite3"],
    alias: { "@acp/core": fileURLToPath(new URL("../../../core/src/index.ts", import.meta.url)) },
    // bundled CommonJS dependencies (canonicalize, yaml) call require(); give the ES module one
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
    logLevel: "error",
  });
});

function runChild(path: string, count: number, tag: string, mode: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, path, String(count), tag, mode, keyPath], { stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

describe("several processes appending to one log", () => {
  it.each(["every", "batch", "many"])(
    "%s mode: two processes produce one valid chain holding every event",
    async (mode) => {
      const path = join(homes.make(), "audit.jsonl");
      const codes = await Promise.all([runChild(path, 120, "alpha", mode), runChild(path, 120, "beta", mode)]);
      expect(codes).toEqual([0, 0]);
      const events = readEvents(path);
      const byAgent = (tag: string): unknown[] =>
        events.filter((e) => e.agent === tag).map((e) => (e.metadata as { i: number }).i);
      const ordered = Array.from({ length: 120 }, (_, i) => i);
      expect(byAgent("alpha")).toEqual(ordered);
      expect(byAgent("beta")).toEqual(ordered);
      const result = verifyFile(path);
      expect(result.problem).toBeNull();
      expect(result.count).toBe(events.length);
      expect(events.filter((e) => e.event_type === "checkpoint").length).toBeGreaterThanOrEqual(2);
    },
  );
});
