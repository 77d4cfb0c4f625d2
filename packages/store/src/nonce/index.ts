/** The durable spent-nonce store: consent approvals are single use, also across restarts. */
export {
  createSqliteNonceStore,
  NONCE_MIGRATIONS,
  type SqliteNonceStore,
  type SqliteNonceStoreOptions,
} from "./sqlite-nonce-store.js";
