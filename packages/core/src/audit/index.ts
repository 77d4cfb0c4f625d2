/** The tamper-evident audit chain (§7): event types, hashing, checkpoints, redaction, verification. */
export { AUDIT_EVENT_TYPES, isAuditEventType, type AuditEventType } from "./event-types.js";
export {
  AUDIT_EVENT_KIND,
  AUDIT_EVENT_VERSION,
  buildAuditEvent,
  computeEventHash,
  createAuditEvent,
  createAuditEventBody,
  sealAuditEvent,
  sealAuditInput,
  sealAuditLine,
  serializeAuditEvent,
  type AuditEventBody,
  type AuditEventInput,
  type AuditEventPlacement,
  type AuditEventV02,
  type AuditMetadata,
  type SealedAuditLine,
} from "./event.js";
export {
  AuditLineStager,
  createStagedAuditLines,
  sealStagedLine,
  unsealStagedLine,
  type StagedAuditLines,
} from "./audit-line.js";
export type { AuditIdBytes } from "./audit-bytes.js";
export { MAX_AUDIT_LINE_LENGTH, NOT_UTF8_AUDIT_LINE, parseAuditLine } from "./parse-event.js";
export {
  CHECKPOINT_KIND,
  createCheckpointBody,
  createCheckpointInput,
  readCheckpoint,
  signCheckpoint,
  toEd25519PublicKey,
  verifyCheckpointSignature,
  type AuditCheckpoint,
  type AuditCheckpointBody,
  type CheckpointPublicKey,
  type CheckpointSigner,
} from "./checkpoint.js";
export { redactAuditInput } from "./redact-input.js";
export { fitAuditInput, omittedString } from "./fit-input.js";
export { auditEventInput, omittedNesting, MAX_METADATA_DEPTH } from "./event-input.js";
export {
  canContinueAuditVerification,
  MAX_LISTED_UNCHECKED_CONSENT,
  RECENT_AUDIT_HASHES,
  verifyAuditChain,
  verifyAuditStream,
  type AuditChainPosition,
  type AuditCheckpointSummary,
  type AuditConsentCount,
  type AuditConsentUnchecked,
  type AuditLines,
  type AuditProblem,
  type AuditRemainder,
  type AuditVerification,
  type VerifyAuditOptions,
  type VerifyAuditStreamOptions,
} from "./verify-chain.js";
export { checkEventConsent, type EventConsentCheck } from "./consent-check.js";
export { AUDIT_PROBLEMS, type AuditProblemCode } from "./problem-codes.js";
export { failForMissingAnchor } from "./missing-anchor.js";
