/** Live sessions shared through the home's `state.db`, and the signed intent updates a person queues for them. */
export {
  LIVE_SESSION_MIGRATIONS,
  LIVE_SESSION_STATUSES,
  INTENT_UPDATE_STATUSES,
  type LiveSessionStatus,
  type IntentUpdateStatus,
} from "./schema.js";
export {
  createLiveSessionStore,
  type LiveSessionStore,
  type LiveSessionStoreOptions,
  type LiveSessionRow,
  type IntentUpdateRow,
  type NewLiveSession,
  type SignUpdate,
  type QueueUpdateResult,
} from "./live-session-store.js";
export { CLOSED_SESSION_KEEP_MS, CLOSED_SESSION_PURGE_BATCH } from "./retention.js";
