import type { Database } from "better-sqlite3";
import type { ProposalLedger, ProposalSighting } from "@acp/core";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";
import {
  MAX_STORED_PROPOSALS,
  assertSightingArguments,
  sightingColumns,
  sightingRowOf,
  type ProposalSightingRow,
  type StoredSighting,
} from "./sighting-row.js";

/** The table of first sights: one row per proposal key. */
export const PROPOSAL_LEDGER_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "proposals/001-first-sight",
    up: `CREATE TABLE proposal_first_sight (
           key           TEXT    PRIMARY KEY,
           first_seen_ms INTEGER NOT NULL,
           domain        TEXT    NOT NULL,
           action        TEXT    NOT NULL,
           proposed_at   TEXT,
           diff          TEXT,
           undo          TEXT,
           tool          TEXT,
           server        TEXT
         ) STRICT;
         CREATE INDEX proposal_first_sight_seen ON proposal_first_sight (first_seen_ms);`,
  },
];

/** The SQLite ledger answers synchronously (better-sqlite3 is synchronous). */
export interface SqliteProposalLedger extends ProposalLedger {
  firstSeen(key: string, now: Date, sighting?: ProposalSighting): Date;
  /** The first sights kept, newest first, at most `limit`. */
  list(limit: number): ProposalSightingRow[];
}

/** Options of {@link createSqliteProposalLedger}. */
export interface StoredProposalLedgerOptions {
  /** Most proposals kept; past it the oldest first sights are forgotten. Default 10,000. */
  readonly maxEntries?: number;
}

const COLUMNS = "key, first_seen_ms, domain, action, proposed_at, diff, undo, tool, server";

/**
 * A proposal ledger in the state database, shared by every process that opens it (`acp proxy`, `acp serve`):
 * a cooling period counts from the first sight any of them recorded, across restarts. Each new proposal is
 * recorded in one `BEGIN IMMEDIATE` transaction (two processes never record two first sights), with what the
 * operator needs to see it (domain, action, diff, undo, call); past `maxEntries` the oldest are forgotten
 * (those start again: stricter, never looser).
 */
export function createSqliteProposalLedger(
  db: Database,
  options: StoredProposalLedgerOptions = {},
): SqliteProposalLedger {
  applyMigrations(db, PROPOSAL_LEDGER_MIGRATIONS);
  const max = Math.max(1, Math.floor(options.maxEntries ?? MAX_STORED_PROPOSALS));
  const find = db.prepare<[string], { first_seen_ms: number }>(
    "SELECT first_seen_ms FROM proposal_first_sight WHERE key = ?",
  );
  const insert = db.prepare(
    `INSERT INTO proposal_first_sight (${COLUMNS})
     VALUES (@key, @first_seen_ms, @domain, @action, @proposed_at, @diff, @undo, @tool, @server)`,
  );
  const trim = db.prepare<[number]>(
    `DELETE FROM proposal_first_sight WHERE key IN (
       SELECT key FROM proposal_first_sight ORDER BY first_seen_ms DESC, key DESC LIMIT -1 OFFSET ?)`,
  );
  const newest = db.prepare<[number], StoredSighting>(
    `SELECT ${COLUMNS} FROM proposal_first_sight ORDER BY first_seen_ms DESC, key DESC LIMIT ?`,
  );
  const record = db.transaction((key: string, ms: number, sighting: ProposalSighting | undefined): number => {
    const known = find.get(key);
    if (known !== undefined) return known.first_seen_ms;
    insert.run({ key, first_seen_ms: ms, ...sightingColumns(sighting) });
    trim.run(max);
    return ms;
  });
  return {
    firstSeen(key, now, sighting) {
      const ms = assertSightingArguments(key, now);
      const known = find.get(key);
      return new Date(known !== undefined ? known.first_seen_ms : record.immediate(key, ms, sighting));
    },
    list(limit) {
      return newest.all(Math.max(0, Math.floor(limit))).map(sightingRowOf);
    },
  };
}

/**
 * The first sights kept in a state database, newest first, without recording anything (a database opened
 * read-only, `acp graph review --status`): none when the table was never made.
 */
export function listSqliteProposalSightings(db: Database, limit: number): ProposalSightingRow[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'proposal_first_sight'").get();
  if (table === undefined) return [];
  return db
    .prepare<[number], StoredSighting>(
      `SELECT ${COLUMNS} FROM proposal_first_sight ORDER BY first_seen_ms DESC, key DESC LIMIT ?`,
    )
    .all(Math.max(0, Math.floor(limit)))
    .map(sightingRowOf);
}
