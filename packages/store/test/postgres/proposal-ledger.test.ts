/** The shared proposal-ledger suite against a real PostgreSQL: every node and restart counts from one first sight. */
import { afterAll } from "vitest";
import { createPostgresProposalLedger, openPostgresStore, type PostgresStore } from "../../src/index.js";
import { describeProposalLedger } from "../cases/proposal-ledger.case.js";
import { useTestDatabase } from "./test-database.js";

const db = useTestDatabase();
const opened: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

async function node(): Promise<PostgresStore> {
  const store = await openPostgresStore(db.url);
  opened.push(store);
  return store;
}

describeProposalLedger("postgres", async (maxEntries) => {
  const first = await node();
  await first.query("TRUNCATE proposal_first_sight");
  const options = maxEntries !== undefined ? { maxEntries } : {};
  return {
    ledger: createPostgresProposalLedger(first, options),
    // another node: its own connection pool on the same database
    reopen: async () => createPostgresProposalLedger(await node(), options),
  };
});
