/** The stable codes of {@link AuditLogError}; listed in docs/reference/errors.md. */
export type AuditLogErrorCode =
  | "audit_log_corrupt"
  | "audit_anchor_mismatch"
  | "audit_anchor_missing"
  | "audit_anchor_database_changed"
  | "audit_log_unsafe"
  | "audit_log_shrunk"
  | "audit_log_replaced"
  | "audit_log_closed"
  | "audit_event_reserved"
  | "audit_write_failed"
  | "audit_lock_timeout";

/** Thrown (or rejected with) when the audit log cannot take an event; the caller must refuse the action. */
export class AuditLogError extends Error {
  readonly code: AuditLogErrorCode;
  constructor(reason: { readonly code: AuditLogErrorCode }, message: string) {
    super(message);
    this.name = "AuditLogError";
    this.code = reason.code;
  }
}
