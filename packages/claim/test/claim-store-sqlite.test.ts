import { applyMigrations, openStateDb } from "@acp/store";
import { CLAIM_MIGRATIONS, SqliteClaimStore } from "../src/index.js";
import { claimStoreContract } from "./claim-store-contract.js";

claimStoreContract("SQLite", (box) => {
  const db = openStateDb(":memory:");
  applyMigrations(db, CLAIM_MIGRATIONS);
  return Promise.resolve({
    store: new SqliteClaimStore(db, box),
    rows: (table) =>
      Promise.resolve(
        db.prepare<[], { n: number }>(table.startsWith("SELECT") ? table : `SELECT count(*) AS n FROM ${table}`).get()
          ?.n ?? 0,
      ),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  });
});
