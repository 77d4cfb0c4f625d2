/**
 * Spent nonces stayed in `state.db` for ever: every approval left a row. The expiry sweep of `acp serve`
 * now prunes those nobody can use any more (a day past their approval, and no consent row carries them).
 */
import { join } from "node:path";
import { describe } from "vitest";
import { openSqliteStores } from "@acp/server";
import { createSqliteNonceStore, openStateDb } from "@acp/store";
import { itPrunesSpentNonces } from "./nonce-prune-sweep.case.js";
import { tempHomes } from "./pending-rows.js";

const homes = tempHomes("acp-sqlite-nonce-prune-");

describe("spent nonces in state.db", () => {
  const home = homes.home();
  const statePath = join(home, "state.db");
  itPrunesSpentNonces(
    async (clock) => homes.keep(await openSqliteStores({ statePath, auditPath: join(home, "audit.jsonl"), clock })),
    (nonce) => {
      const db = openStateDb(statePath);
      try {
        return Promise.resolve(createSqliteNonceStore(db).isSpent(nonce));
      } finally {
        db.close();
      }
    },
  );
});
