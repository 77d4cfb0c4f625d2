/**
 * A sweeper in a worker thread (bundled by `concurrent-prune.test.ts`): opens the state database, waits at
 * the barrier until every sweeper has opened it, prunes once and posts how many nonces it deleted.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createSqliteNonceStore } from "../../src/nonce/index.js";
import { openStateDb } from "../../src/sqlite/index.js";

const { path, nowMs, barrier, parties } = workerData as {
  path: string;
  nowMs: number;
  barrier: SharedArrayBuffer;
  parties: number;
};
const db = openStateDb(path);
const nonces = createSqliteNonceStore(db, { now: () => nowMs });
const arrived = new Int32Array(barrier);
Atomics.add(arrived, 0, 1);
Atomics.notify(arrived, 0);
for (let seen = Atomics.load(arrived, 0); seen < parties; seen = Atomics.load(arrived, 0)) {
  Atomics.wait(arrived, 0, seen);
}
try {
  parentPort?.postMessage({ deleted: nonces.prune(nowMs) });
} catch (err) {
  parentPort?.postMessage({ error: err instanceof Error ? err.message : String(err) });
} finally {
  db.close();
}
