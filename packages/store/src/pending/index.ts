/** The pending-consent table: consent requests waiting for a person, answered once from any process. */
export { PENDING_STATUSES, ensurePendingConsentSchema, type PendingStatus } from "./schema.js";
export {
  createPendingConsentStore,
  type PendingConsentStore,
  type PendingConsentStoreOptions,
  type PendingConsentRow,
  type PendingConsentPeek,
  type NewPendingConsent,
  type DecideResult,
  type DecideFailure,
} from "./pending-store.js";
export {
  MAX_PENDING_PAGE_ROWS,
  type PendingCursor,
  type PendingId,
  type PendingPage,
  type PendingPageQuery,
} from "./pending-page.js";
export { requestAgent, type PendingLimit, type PendingInsertResult } from "./pending-limit.js";
export { openPendingConsentDb } from "./open-db.js";
export { createConsentGrantStore, type ConsentGrantStore } from "./grant-store.js";
export { SETTLED_CONSENT_KEEP_MS, SETTLED_CONSENT_PURGE_BATCH, settledConsentCutoff } from "./retention.js";
export { currentOwner, ownerState, isOrphaned, describeOwner, type PendingOwner, type OwnerState } from "./owner.js";
