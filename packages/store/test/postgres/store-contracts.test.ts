/**
 * The shared suites (rate limiter, nonce store and its prune, the attestation ledger on it, pending consent
 * store) against a real PostgreSQL.
 */
import { afterAll } from "vitest";
import { describeRateLimiter } from "../../../core/test/evaluate/rate-limiter.case.js";
import { describeNonceStore } from "../nonce-store.case.js";
import { describeNoncePrune } from "../nonce-prune.case.js";
import { describePendingConsentStore } from "../cases/pending-store.case.js";
import { describeAttestationLedger } from "../attestation-ledger.case.js";
import {
  createNonceAttestationLedger,
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresRateLimiter,
  openPostgresStore,
  type PostgresStore,
} from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
let store: PostgresStore | undefined;
/** Another node: its own connection pool on the same database. */
let otherNode: PostgresStore | undefined;

afterAll(async () => {
  await store?.close();
  await otherNode?.close();
});

/** The store (opened on first use) with `table` emptied: each factory call starts from no state. */
async function emptied(table: string): Promise<PostgresStore> {
  store ??= await openPostgresStore(db.url);
  await store.query(`TRUNCATE ${table}`);
  return store;
}

describeRateLimiter("postgres", async () => createPostgresRateLimiter(await emptied("rate_limit_hits")));
describeNonceStore("postgres", async () =>
  createPostgresNonceStore(await emptied("spent_nonces, spent_nonces_forgotten")),
);
describePendingConsentStore("postgres", async () =>
  createPostgresPendingConsentStore(await emptied("pending_consent")),
);
describeNoncePrune("postgres", async (clock) => {
  const db = await emptied("spent_nonces, spent_nonces_forgotten, pending_consent");
  return {
    nonces: createPostgresNonceStore(db, { now: clock }),
    holdRow: async (id, nonce) => {
      await db.query(
        `INSERT INTO pending_consent (id, nonce, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms, status)
         VALUES ($1, $2, 'mail', 'send_email', '{}', '[]', 0, 0, 'approved')`,
        [id, nonce],
      );
    },
    dropRow: async (id) => {
      await db.query("DELETE FROM pending_consent WHERE id = $1", [id]);
    },
  };
});

describeAttestationLedger("postgres", async (clock) => {
  const nonces = createPostgresNonceStore(await emptied("spent_nonces, spent_nonces_forgotten"), { now: clock });
  otherNode ??= await openPostgresStore(db.url);
  return {
    ledger: createNonceAttestationLedger(nonces),
    other: createNonceAttestationLedger(createPostgresNonceStore(otherNode, { now: clock })),
    isSpent: (nonce) => nonces.isSpent(nonce),
    prune: (nowMs) => nonces.prune(nowMs),
    broken: async () => {
      const closed = await openPostgresStore(db.url);
      await closed.close();
      return createNonceAttestationLedger(createPostgresNonceStore(closed));
    },
  };
});
