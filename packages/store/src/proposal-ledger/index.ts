/**
 * The consent graph's proposal ledger in the state database (SQLite here; PostgreSQL in `postgres/`): when
 * ACP first saw each proposal, so a cooling period survives a restart and is shared by every process.
 */
export {
  createSqliteProposalLedger,
  listSqliteProposalSightings,
  PROPOSAL_LEDGER_MIGRATIONS,
  type SqliteProposalLedger,
  type StoredProposalLedgerOptions,
} from "./sqlite-proposal-ledger.js";
export {
  MAX_STORED_PROPOSALS,
  MAX_SIGHTING_TEXT,
  MAX_SIGHTING_NAME,
  type ProposalSightingRow,
} from "./sighting-row.js";
