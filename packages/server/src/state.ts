/**
 * `@acp/server/state`: what the commands that read or answer `acp serve`'s state use (`acp pending`,
 * `approve`, `audit verify`, `console-link`, `doctor`): where it is stored, its pending consent requests, the
 * running service's state file, the recording of a person's answer, and the readings of a policy run as the
 * service runs it (`acp policy simulate`). Without the service itself (HTTP, the MCP SDK), so those commands
 * start fast.
 */
export { HttpError } from "./http/error-body.js";
export { answerConsent, type ConsentAnswerInput, type ConsentView } from "./service/consent-view.js";
export { openPendingConsent, type PendingConsentHandle } from "./store/open-pending-consent.js";
export { openConsoleAuth, type ConsoleAuthHandle } from "./store/open-console-auth.js";
export { readServeState, type ServeState } from "./serve-state.js";
export {
  resolveStorageUrl,
  safeStorageUrl,
  explainStorageError,
  STORAGE_URL_ENV,
  type ResolvedStorageUrl,
  type StorageUrlSource,
} from "./store/storage-url.js";
export { LINK_TTL_MS, checkApproverName } from "./console/session.js";
export { anyServerPipelineOf, countOncePerCall, useAttestationOncePerCall } from "./service/server-readings.js";
