/**
 * The one mapping from failures to the service's error body: `{ "error": { "code", "message" } }`
 * with a stable snake_case code (listed in docs/reference/errors.md, section Server).
 */

/** Every error code the service answers with. */
export const SERVER_ERROR_CODES = [
  "bad_request",
  "malformed_json",
  "body_too_large",
  "unsupported_media_type",
  "unknown_field",
  "invalid_body",
  "invalid_query",
  "invalid_event",
  "unsafe_integer",
  "auth_header_malformed",
  "auth_token_missing",
  "auth_token_wrong",
  "host_not_allowed",
  "origin_not_allowed",
  "not_found",
  "method_not_allowed",
  "consent_request_unknown",
  "consent_request_expired",
  "consent_request_orphaned",
  "consent_request_already_decided",
  "consent_nonce_mismatch",
  "consent_queue_full",
  "consent_api_token_required",
  "approver_token_required",
  "agent_mismatch",
  "server_not_allowed",
  "approver_mismatch",
  "consent_already_completed",
  "console_link_invalid",
  "console_session_required",
  "csrf_token_invalid",
  "audit_unavailable",
  "state_unavailable",
  "not_ready",
  "internal_error",
] as const;

/** One error code of the service. */
export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[number];

/** The JSON body of every 4xx/5xx answer. */
export interface ServerErrorBody {
  readonly error: { readonly code: ServerErrorCode; readonly message: string };
}

/** Builds the error body. Messages are lowercase, one line, and never carry a secret. */
export function errorBody(code: ServerErrorCode, message: string): ServerErrorBody {
  return { error: { code, message } };
}

/** An error a handler throws to answer with a status and a code. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ServerErrorCode;
  /** `Retry-After` (whole seconds) of the answer, when it tells when asking again may be answered otherwise. */
  readonly retryAfter: string | undefined;
  constructor(status: number, code: ServerErrorCode, message: string, retryAfter?: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** The JSON schema of the error body, for the OpenAPI document. */
export const ERROR_BODY_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string", enum: [...SERVER_ERROR_CODES] }, message: { type: "string" } },
    },
  },
} as const;
