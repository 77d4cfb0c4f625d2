/**
 * Several processes share `state.db` and each prunes spent nonces (on every spend; `acp serve` every minute
 * too). Two sweepers in worker threads open the file, meet at a barrier and prune at the same moment: each
 * old nonce is deleted once between them, neither fails on the other's write lock, and the nonces still
 * needed — fresh, or carried by a consent row — stay.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqliteNonceStore, SPENT_NONCE_KEEP_MS } from "../../src/nonce/index.js";
import { openStateDb } from "../../src/sqlite/index.js";

const dir = mkdtempSync(join(tmpdir(), "acp-nonce-prune-"));
const script = join(dir, "prune-worker.mjs");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await build({
    entryPoints: [fileURLToPath(new URL("./prune-worker.ts", import.meta.url))],
    outfile: script,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // the bundle lives outside the repository: the native module is imported by its absolute path
    plugins: [
      {
        name: "better-sqlite3-absolute",
        setup(b) {
          const path = createRequire(import.meta.url).resolve("better-sqlite3");
          b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path, external: true }));
        },
      },
    ],
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
    logLevel: "error",
  });
});

const T0 = Date.parse("2026-04-01T12:00:00Z");
const LATER = T0 + 60_000 + SPENT_NONCE_KEEP_MS + 1;
const OLD = 3000;

function sweeper(path: string, barrier: SharedArrayBuffer, parties: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { workerData: { path, nowMs: LATER, barrier, parties } });
    worker.once("message", (m: { deleted?: number; error?: string }) =>
      m.error === undefined ? resolve(m.deleted ?? -1) : reject(new Error(m.error)),
    );
    worker.once("error", reject);
  });
}

describe("two sweepers pruning one state.db at once", () => {
  it("delete each old nonce once between them, and keep the fresh and the held ones", async () => {
    const path = join(dir, "state.db");
    const db = openStateDb(path);
    const nonces = createSqliteNonceStore(db, { now: () => T0 });
    db.transaction(() => {
      for (let i = 0; i < OLD; i++) nonces.spend(`n_old_${i}`, `cr_old_${i}`, T0 + 60_000);
    })();
    nonces.spend("n_fresh", "cr_fresh", LATER);
    nonces.spend("n_held", "cr_held", T0 + 60_000);
    db.prepare(
      `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms, status)
       VALUES ('cr_held', 'n_held', 'mail', 'send_email', '{}', '[]', 0, 0, 'approved')`,
    ).run();

    const barrier = new SharedArrayBuffer(4);
    // each deletes at most a sweep's batch (1000): three sweeps between them, two at once
    const first = await Promise.all([sweeper(path, barrier, 2), sweeper(path, barrier, 2)]);
    expect(first.every((n) => n === 1000)).toBe(true);
    expect(nonces.prune(LATER)).toBe(OLD - 2000);
    expect(nonces.prune(LATER)).toBe(0); // idempotent

    const left = db.prepare<[], { nonce: string }>("SELECT nonce FROM spent_nonces ORDER BY nonce").all();
    expect(left.map((r) => r.nonce)).toEqual(["n_fresh", "n_held"]);
    db.close();
  });
});
