/**
 * The PostgreSQL state store (`storage.url: postgres://…`): the SQLite store's tables on a server shared
 * by several nodes, consent decisions announced with LISTEN/NOTIFY, and one audit chain for all nodes.
 */
export {
  openPostgresStore,
  redactPostgresUrl,
  type OpenPostgresStoreOptions,
  type PostgresStore,
} from "./open-postgres-store.js";
export { applyPostgresMigrations, listPostgresMigrations, type PostgresMigration } from "./migrations.js";
export { POSTGRES_MIGRATIONS, ADVISORY_LOCK } from "./schema.js";
export { POSTGRES_STORE_ERROR_CODES, PostgresStoreError, type PostgresStoreErrorCode } from "./postgres-store-error.js";
export { createPostgresNonceStore, type PostgresNonceStore, type PostgresNonceStoreOptions } from "./nonce-store.js";
export {
  createPostgresRateLimiter,
  type PostgresRateLimiter,
  type PostgresRateLimiterOptions,
} from "./rate-limiter.js";
export { createPostgresProposalLedger, type PostgresProposalLedger } from "./proposal-ledger.js";
export { toAsyncPendingConsentStore, type AsyncPendingConsentStore } from "./async-pending-store.js";
export {
  createPostgresPendingConsentStore,
  CONSENT_CHANNEL,
  DEFAULT_PENDING_LOCK_TIMEOUT_MS,
  MAX_CONSENT_ID_LENGTH,
  type PostgresPendingStoreOptions,
} from "./pending-store.js";
export { watchConsentDecisions, type ConsentWatch, type WatchConsentOptions } from "./consent-watch.js";
export {
  CONSENT_WAIT_POLL_MS,
  openConsentWaiter,
  type ConsentWaiter,
  type ConsentWaiterOptions,
} from "./consent-waiter.js";
export { createPostgresConsentGrantStore, type AsyncConsentGrantStore } from "./grant-store.js";
export { createPostgresAuditLog, type PostgresAuditLog, type PostgresAuditLogOptions } from "./audit-log.js";
export {
  openPostgresAuditAnchor,
  postgresFirstAnchorMessage,
  postgresFirstAnchorStartMessage,
  type AnchorQuery,
  type PostgresAuditAnchor,
  type PostgresAuditAnchorOptions,
  type PostgresFirstAnchor,
} from "./audit-anchor.js";
export {
  hasPostgresAnchoredMarker,
  markPostgresAnchored,
  postgresAnchoredMarkerPathOf,
  postgresAnchorMissingError,
  postgresAnchorMissingReason,
} from "./anchor-marker.js";
export {
  DEFAULT_POSTGRES_CONNECT_WAIT_MS,
  isPostgresStarting,
  waitForPostgres,
  type PostgresConnectRetry,
  type WaitForPostgresOptions,
} from "./connect-wait.js";
export {
  legacyPostgresAuditAnchorPath,
  postgresDatabaseIdentity,
  resolvePostgresAuditAnchorPath,
  type PostgresAuditAnchorPlace,
} from "./anchor-name.js";
export {
  describePostgresDatabase,
  postgresConnectionRecordPath,
  postgresConnectionTarget,
  postgresDatabaseChangedMessage,
  type PostgresAnchorDatabaseChange,
} from "./anchor-database.js";
export {
  exportPostgresAuditJsonl,
  readPostgresAuditLines,
  readPostgresAuditPages,
  readPostgresAuditRows,
  verifyPostgresAuditChain,
  verifyPostgresAuditRows,
  type PostgresAuditRow,
  type PostgresAuditVerification,
  type ReadAuditLinesOptions,
  type VerifyPostgresAuditOptions,
} from "./audit-export.js";
export {
  MAX_AUDIT_PAGE_BYTES,
  MAX_AUDIT_ROW_BYTES,
  overlongAuditRow,
  readPostgresAuditPage,
  readPostgresAuditRow,
  type AuditRowQuery,
  type PostgresAuditPage,
} from "./audit-rows.js";
export {
  clockSkewBeyond,
  describeClockSkew,
  MAX_CLOCK_SKEW_MS,
  measureClockSkew,
  type ClockSkew,
} from "./clock-skew.js";
