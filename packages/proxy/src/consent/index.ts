/**
 * The consent broker and its channels: a consent request (§4.1) goes to every available channel, the first
 * answer becomes a signed, verified consent response (§4.2), and the broker resolves the proxy's ask.
 */
export * from "./types.js";
export type {
  BrokerAsk,
  BrokerOutcome,
  SignConsentResponse,
  VerifyConsentResponse,
  ConsentAuditSink,
} from "./broker-types.js";
export {
  createConsentBroker,
  PROXY_MAX_WAITING_PER_SESSION,
  type ConsentBrokerOptions,
  type ConsentBrokerHandle,
} from "./broker.js";
export { REDACTED, createConsentRedactor, restoreRedacted } from "./redact.js";
export { parseApprovalDuration, isApprovalScope, describeScope, MAX_APPROVAL_WINDOW_MS } from "./scope.js";
export {
  buildConsentRequest,
  createConsentRequestId,
  createConsentNonce,
  type ConsentAgentInfo,
  type ConsentRequestSource,
} from "./request.js";
export { checkHumanAnswer } from "./response.js";
export { consentActionFields } from "./record.js";
export { realTimers, sleep, type ConsentTimers } from "./timers.js";
export * from "./channels/cli/index.js";
export * from "./channels/terminal/index.js";
export * from "./channels/webhook/index.js";
export * from "./channels/telegram/index.js";
