import { describe, expect, it } from "vitest";
import { applyMigrations, openStateDb } from "@acp/store";
import { CLAIM_MIGRATIONS, SqliteClaimStore } from "../src/index.js";
import { SQLITE_PURGE } from "../src/store/purge-sql.js";
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

describe("the sweep's purge on SQLite", () => {
  it("finds its rows through indexes: spent challenges, expired or revoked credentials, ended sandboxes' metadata", () => {
    const db = openStateDb(":memory:");
    applyMigrations(db, CLAIM_MIGRATIONS);
    const plan = (sql: string, ...args: number[]): string =>
      db
        .prepare<number[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...args)
        .map((r) => r.detail)
        .join(" | ");
    expect(plan(SQLITE_PURGE.challenges, 1)).toMatch(/USING INDEX claim_spent_challenges_expiry/);
    const credentials = plan(SQLITE_PURGE.credentials, 1, 1);
    expect(credentials).toMatch(/USING INDEX claim_credentials_expiry/);
    expect(credentials).toMatch(/USING INDEX claim_credentials_revoked/);
    expect(plan(SQLITE_PURGE.metadata, 1)).toMatch(/USING INDEX claim_sandboxes_ended \(state=\? AND ended_at<\?\)/);
    db.close();
  });
});
