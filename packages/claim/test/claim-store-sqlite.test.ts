import { applyMigrations, openStateDb } from "@acp/store";
import { CLAIM_MIGRATIONS, SqliteClaimStore } from "../src/index.js";
import { claimStoreContract } from "./claim-store-contract.js";

claimStoreContract("SQLite", (box) => {
  const db = openStateDb(":memory:");
  applyMigrations(db, CLAIM_MIGRATIONS);
  return Promise.resolve({
    store: new SqliteClaimStore(db, box),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  });
});
