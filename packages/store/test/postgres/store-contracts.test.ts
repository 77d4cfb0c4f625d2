/** The shared suites (rate limiter, nonce store, pending consent store) against a real PostgreSQL. */
import { afterAll } from "vitest";
import { describeRateLimiter } from "../../../core/test/evaluate/rate-limiter.case.js";
import { describeNonceStore } from "../nonce-store.case.js";
import { describePendingConsentStore } from "../cases/pending-store.case.js";
import {
  createPostgresNonceStore,
  createPostgresPendingConsentStore,
  createPostgresRateLimiter,
  openPostgresStore,
  type PostgresStore,
} from "../../src/index.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
let store: PostgresStore | undefined;

afterAll(async () => {
  await store?.close();
});

/** The store (opened on first use) with `table` emptied: each factory call starts from no state. */
async function emptied(table: string): Promise<PostgresStore> {
  store ??= await openPostgresStore(db.url);
  await store.query(`TRUNCATE ${table}`);
  return store;
}

describeRateLimiter("postgres", async () => createPostgresRateLimiter(await emptied("rate_limit_hits")));
describeNonceStore("postgres", async () => createPostgresNonceStore(await emptied("spent_nonces")));
describePendingConsentStore("postgres", async () =>
  createPostgresPendingConsentStore(await emptied("pending_consent")),
);
