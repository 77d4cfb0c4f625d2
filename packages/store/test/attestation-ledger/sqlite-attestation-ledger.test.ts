/** The shared attestation-ledger suite on SQLite: two connections to one `state.db` file share what was used. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createNonceAttestationLedger, createSqliteNonceStore } from "../../src/nonce/index.js";
import { openStateDb } from "../../src/sqlite/index.js";
import { describeAttestationLedger } from "../attestation-ledger.case.js";

const dir = mkdtempSync(join(tmpdir(), "acp-attestations-"));
const opened: { close(): unknown }[] = [];
afterAll(() => {
  for (const db of opened) db.close();
  rmSync(dir, { recursive: true, force: true });
});

let files = 0;
describeAttestationLedger("sqlite", (clock) => {
  const path = join(dir, `state-${files++}.db`);
  const connect = () => {
    const db = openStateDb(path);
    opened.push(db);
    return createSqliteNonceStore(db, { now: clock });
  };
  const first = connect();
  const second = connect();
  return Promise.resolve({
    ledger: createNonceAttestationLedger(first),
    other: createNonceAttestationLedger(second),
    isSpent: (nonce) => first.isSpent(nonce),
    prune: (nowMs) => first.prune(nowMs),
    broken: () => {
      const db = openStateDb(path);
      const nonces = createSqliteNonceStore(db, { now: clock });
      db.close();
      return Promise.resolve(createNonceAttestationLedger(nonces));
    },
  });
});
