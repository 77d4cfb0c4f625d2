/**
 * Spent nonces stayed in PostgreSQL for ever: every approval on any node left a row. Each node's expiry
 * sweep now prunes those nobody can use any more (a day past their approval, and no consent row carries them).
 */
import { afterAll, describe } from "vitest";
import { openPostgresStores, type ServerStores } from "@acp/server";
import { createPostgresNonceStore, openPostgresStore, type PostgresStore } from "@acp/store";
import { useTestDatabase } from "../../../store/test/postgres/test-database.js";
import { itPrunesSpentNonces } from "../nonce-prune-sweep.case.js";

const db = useTestDatabase();
const opened: ServerStores[] = [];
let reader: PostgresStore | undefined;
afterAll(async () => {
  for (const s of opened) await s.close();
  await reader?.close();
});

describe("spent nonces in postgres", () => {
  itPrunesSpentNonces(
    async (clock) => {
      // the test's clock runs months apart from the database's on purpose: not the skew guard's case
      const stores = await openPostgresStores({ url: db.url, clock, onError: () => undefined, maxClockSkewMs: 0 });
      opened.push(stores);
      return stores;
    },
    async (nonce) => {
      reader ??= await openPostgresStore(db.url);
      return createPostgresNonceStore(reader).isSpent(nonce);
    },
  );
});
