/** The audit log writer: one hash chain per file, shared by processes, durable, crash-safe. */
export { openAuditLog, type AuditFsyncMode, type AuditLog, type AuditLogOptions } from "./audit-log.js";
export {
  anchoredMarkerPathOf,
  anchorPathOf,
  hasAnchoredMarker,
  readAnchor,
  readAnchorFile,
  writeAnchor,
} from "./anchor.js";
export {
  acquireFileLock,
  FileLock,
  FileLockTimeoutError,
  listLockHolders,
  type FileLockOptions,
  type LockHolder,
  type ReleaseLock,
} from "./file-lock.js";
export { AuditLogError, type AuditLogErrorCode } from "./audit-log-error.js";
export {
  CHECKPOINT_MARKER_TEXT,
  scanAuditLog,
  type ChainPosition,
  type ScanResult,
  type TornBytes,
} from "./scan-log.js";
export { type TornTail } from "./torn-tail.js";
export { reanchoredMessage, type Reanchored } from "./unanchored-log.js";
export {
  countAuditFileLines,
  readAuditFileLines,
  readAuditFileLinesBackward,
  type AuditFileCount,
  type AuditFileCountedLines,
  type AuditFileExtent,
  type AuditFileLines,
  type AuditFileProgress,
  type NumberedAuditLine,
  type ReadAuditFileOptions,
  type ReadBackwardOptions,
} from "./read-lines.js";
export { verifyAuditFile, type AuditFileVerification, type VerifyAuditFileOptions } from "./verify-file.js";
