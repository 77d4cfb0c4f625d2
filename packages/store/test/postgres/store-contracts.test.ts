/** The shared suites (rate limiter, nonce store, pending consent store) against a real PostgreSQL. */
import { afterAll, beforeAll } from "vitest";
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
import { createTestDatabase, type TestDatabase } from "./test-database.js";

let db: TestDatabase | undefined;
let store: PostgresStore | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  store = await openPostgresStore(db.url);
});

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** The open store with `table` emptied: each factory call starts from no state. */
async function emptied(table: string): Promise<PostgresStore> {
  if (store === undefined) throw new Error("the postgres store did not open (see beforeAll)");
  await store.query(`TRUNCATE ${table}`);
  return store;
}

describeRateLimiter("postgres", async () => createPostgresRateLimiter(await emptied("rate_limit_hits")));
describeNonceStore("postgres", async () => createPostgresNonceStore(await emptied("spent_nonces")));
describePendingConsentStore("postgres", async () =>
  createPostgresPendingConsentStore(await emptied("pending_consent")),
);
