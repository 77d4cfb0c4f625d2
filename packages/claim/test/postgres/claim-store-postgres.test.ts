import { createTestDatabase } from "../../../store/test/postgres/test-database.js";
import { openClaimPostgres, PostgresClaimStore } from "../../src/index.js";
import { claimStoreContract } from "../claim-store-contract.js";

// Each test gets its own database on the run's real PostgreSQL (the vitest globalSetup starts it).
claimStoreContract("PostgreSQL", async (box) => {
  const db = await createTestDatabase();
  const pg = await openClaimPostgres(db.url, { max: 10 });
  return {
    store: new PostgresClaimStore(pg, box),
    rows: async (table) =>
      Number(
        (await pg.query<{ n: string }>(table.startsWith("SELECT") ? table : `SELECT count(*) AS n FROM ${table}`))
          .rows[0]?.n,
      ),
    close: async () => {
      await pg.close();
      await db.drop();
    },
  };
});
