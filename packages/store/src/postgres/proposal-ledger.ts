import type { ProposalLedger, ProposalSighting } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";
import { PostgresStoreError } from "./postgres-store-error.js";
import type { StoredProposalLedgerOptions } from "../proposal-ledger/sqlite-proposal-ledger.js";
import {
  MAX_STORED_PROPOSALS,
  assertSightingArguments,
  sightingColumns,
  sightingRowOf,
  type ProposalSightingRow,
  type StoredSighting,
} from "../proposal-ledger/sighting-row.js";

/** The first sights of proposals, as in SQLite (`proposals/001-first-sight`). */
export const PROPOSAL_FIRST_SIGHT = `
CREATE TABLE proposal_first_sight (
  key           TEXT   PRIMARY KEY,
  first_seen_ms BIGINT NOT NULL,
  domain        TEXT   NOT NULL,
  action        TEXT   NOT NULL,
  proposed_at   TEXT,
  diff          TEXT,
  undo          TEXT,
  tool          TEXT,
  server        TEXT
);
CREATE INDEX proposal_first_sight_seen ON proposal_first_sight (first_seen_ms);`;

/** The PostgreSQL ledger answers asynchronously. */
export interface PostgresProposalLedger extends ProposalLedger {
  firstSeen(key: string, now: Date, sighting?: ProposalSighting): Promise<Date>;
  /** The first sights kept, newest first, at most `limit`. */
  list(limit: number): Promise<ProposalSightingRow[]>;
}

const COLUMNS = "key, first_seen_ms, domain, action, proposed_at, diff, undo, tool, server";

/**
 * A proposal ledger shared by every node on the database: the first node to see a proposal records its
 * first sight (`INSERT … ON CONFLICT DO NOTHING`: two nodes never record two), and every node and restart
 * counts the cooling period from it. Past `maxEntries` the oldest are forgotten (those start again).
 */
export function createPostgresProposalLedger(
  store: PostgresStore,
  options: StoredProposalLedgerOptions = {},
): PostgresProposalLedger {
  const max = Math.max(1, Math.floor(options.maxEntries ?? MAX_STORED_PROPOSALS));
  const find = async (key: string): Promise<number | undefined> => {
    const found = await store.query<{ first_seen_ms: string }>(
      "SELECT first_seen_ms FROM proposal_first_sight WHERE key = $1",
      [key],
    );
    const row = found.rows[0];
    return row === undefined ? undefined : Number(row.first_seen_ms);
  };
  return {
    async firstSeen(key, now, sighting) {
      const ms = assertSightingArguments(key, now);
      const known = await find(key);
      if (known !== undefined) return new Date(known);
      const c = sightingColumns(sighting);
      const inserted = await store.query(
        `INSERT INTO proposal_first_sight (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (key) DO NOTHING`,
        [key, ms, c.domain, c.action, c.proposed_at, c.diff, c.undo, c.tool, c.server],
      );
      if (inserted.rowCount === 1) {
        await store.query(
          `DELETE FROM proposal_first_sight WHERE key IN (
             SELECT key FROM proposal_first_sight ORDER BY first_seen_ms DESC, key DESC OFFSET $1)`,
          [max],
        );
        return new Date(ms);
      }
      // another node recorded it first (its insert committed before ours gave way): read its time
      const theirs = await find(key);
      if (theirs === undefined) {
        throw new PostgresStoreError("postgres_unavailable", "proposal ledger: no first sight after recording one");
      }
      return new Date(theirs);
    },
    async list(limit) {
      const rows = await store.query<StoredSighting>(
        `SELECT ${COLUMNS} FROM proposal_first_sight ORDER BY first_seen_ms DESC, key DESC LIMIT $1`,
        [Math.max(0, Math.floor(limit))],
      );
      return rows.rows.map(sightingRowOf);
    },
  };
}
