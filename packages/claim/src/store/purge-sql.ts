/**
 * The statements of the sweep's purge (`ClaimStore.sweep`), on SQLite (`?`) and PostgreSQL (`$1`): spent
 * challenges past their expiry, credentials a day past their expiry or revocation, and the metadata of
 * sandboxes a day after they ended (`ENDED_RETENTION_MS`). Each is served by an index of
 * `claim/003-purge-indexes`, so a sweep reads what it purges, not every row ever written.
 */
export const SQLITE_PURGE = {
  challenges: "DELETE FROM claim_spent_challenges WHERE expires_at <= ?",
  /** Binds the cutoff twice. */
  credentials: "DELETE FROM claim_credentials WHERE expires_at <= ? OR (revoked_at IS NOT NULL AND revoked_at <= ?)",
  metadata:
    "UPDATE claim_sandboxes SET metadata = '{}' WHERE state IN ('expired','deleted') AND ended_at <= ? AND metadata <> '{}'",
} as const;

/** {@link SQLITE_PURGE} on PostgreSQL: each binds the cutoff as `$1`. */
export const POSTGRES_PURGE = {
  challenges: "DELETE FROM claim_spent_challenges WHERE expires_at <= $1",
  credentials: "DELETE FROM claim_credentials WHERE expires_at <= $1 OR (revoked_at IS NOT NULL AND revoked_at <= $1)",
  metadata:
    "UPDATE claim_sandboxes SET metadata = '{}' WHERE state IN ('expired','deleted') AND ended_at <= $1 AND metadata <> '{}'",
} as const;

/**
 * The indexes of the purge (the same on both stores): expiry of spent challenges and credentials, revocation
 * of revoked credentials, and the end of ended sandboxes that still hold metadata (a partial index: it holds
 * only the rows the purge has yet to clear, whatever the number of sandboxes kept).
 */
export const PURGE_INDEXES = `
CREATE INDEX claim_spent_challenges_expiry ON claim_spent_challenges(expires_at);
CREATE INDEX claim_credentials_expiry ON claim_credentials(expires_at);
CREATE INDEX claim_credentials_revoked ON claim_credentials(revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX claim_sandboxes_ended ON claim_sandboxes(state, ended_at) WHERE metadata <> '{}';
`;
