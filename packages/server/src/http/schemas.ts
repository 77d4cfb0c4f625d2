/**
 * The JSON schemas that validate requests; the OpenAPI document is generated from the same objects.
 * Objects are closed (`additionalProperties: false`): an unknown field is a 400, never ignored.
 */
import { CATEGORIES, CONTRACT_JSON_SCHEMA, RISK_LEVELS, ROUTES } from "@acp/core";
import { ERROR_BODY_SCHEMA } from "./error-body.js";

/**
 * Text with no NUL character: PostgreSQL's text cannot hold one, so a name or session with a NUL could be
 * decided but never become a consent request there (an internal error); refused on every store alike.
 */
export const NO_NUL_PATTERN = "^[^\\u0000]*$";

/** An ISO-8601 date and time with its zone (`2026-11-29T14:00:00Z`, `…+01:00`). */
const ISO_TIME_WITH_ZONE = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$";

const NAME = { type: "string", minLength: 1, maxLength: 256, pattern: NO_NUL_PATTERN } as const;

/**
 * A trusted-channel attestation (`TrustedChannelAttestation`): the configured key that signed, when, and the
 * lowercase hex HMAC-SHA256 of the statement. A malformed one is 400, never judged; one that does not verify
 * (an unknown key, a stale time, a wrong HMAC) or was used before is judged: BLOCKED.
 */
const ATTESTATION = {
  type: "object",
  additionalProperties: false,
  required: ["key_id", "timestamp", "hmac"],
  description:
    "the trusted channel's attestation for this call (a trusted_channel_required action), good for one request",
  properties: {
    key_id: { type: "string", minLength: 1, maxLength: 64, pattern: "^[a-z_][a-z0-9_]*$" },
    timestamp: {
      type: "string",
      maxLength: 40,
      pattern: ISO_TIME_WITH_ZONE,
      description: "ISO-8601 with a zone, when the attestation was made",
    },
    hmac: { type: "string", pattern: "^[0-9a-f]{64}$", description: "lowercase hex HMAC-SHA256" },
  },
} as const;

/**
 * A self-modification proposal (`GraphProposal`): its explicit diff, how to undo it, when it was proposed. A
 * malformed one (another member, a `proposed_at` that is no ISO-8601 time with a zone, a text over its
 * bound) is 400, never judged; a well-formed one the domain finds wanting (no diff, no undo, no time for a
 * cooling period) is judged: BLOCKED, naming what is missing.
 */
const PROPOSAL = {
  type: "object",
  additionalProperties: false,
  description:
    "the self-modification proposal this call makes (consent graph: require_diff, undo_window_days, cooling_period_hours)",
  properties: {
    diff: {
      type: "string",
      maxLength: 65_536,
      pattern: NO_NUL_PATTERN,
      description: "the explicit before/after diff: `-` and `+` lines, or a unified diff with its `@@` hunk header",
    },
    undo: { type: "string", maxLength: 16_384, pattern: NO_NUL_PATTERN, description: "how to undo the change" },
    proposed_at: {
      type: "string",
      maxLength: 40,
      pattern: ISO_TIME_WITH_ZONE,
      description:
        "ISO-8601 with a zone, when it was proposed (a cooling period counts from the later of this and ACP's first sight)",
    },
  },
} as const;

/** The Agent Action Contract v1 schema as an OpenAPI body (the `$schema` / `$id` keywords dropped). */
export const CONTRACT_EVENT_BODY: Record<string, unknown> = Object.fromEntries(
  Object.entries(CONTRACT_JSON_SCHEMA).filter(([key]) => key !== "$schema" && key !== "$id"),
);

/** An action request (`POST /v1/decide`). */
export const ACTION_REQUEST_BODY = {
  type: "object",
  additionalProperties: false,
  required: ["tool", "arguments"],
  properties: {
    tool: NAME,
    server: NAME,
    agent: NAME,
    arguments: { type: "object", description: "the tool's arguments" },
    category: { type: "string", enum: [...CATEGORIES] },
    risk_level: { type: "string", enum: [...RISK_LEVELS] },
    annotations: {
      type: "object",
      additionalProperties: false,
      properties: {
        readOnlyHint: { type: "boolean" },
        destructiveHint: { type: "boolean" },
        idempotentHint: { type: "boolean" },
        openWorldHint: { type: "boolean" },
      },
    },
    graph: {
      type: "object",
      additionalProperties: false,
      required: ["domain", "action"],
      properties: {
        domain: NAME,
        action: NAME,
        confidence: { type: "number" },
        attestation: ATTESTATION,
        proposal: PROPOSAL,
      },
    },
    contract: { type: "object", description: "an Agent Action Contract v1 event" },
  },
} as const;

/** Query of `POST /v1/decide`. */
export const DECIDE_QUERY = {
  type: "object",
  additionalProperties: false,
  properties: {
    wait: { type: "string", enum: ["true", "false"], description: "on ask/defer, wait for a person's answer" },
    session: {
      type: "string",
      minLength: 1,
      maxLength: 128,
      pattern: NO_NUL_PATTERN,
      description: "the agent session (for session approvals)",
    },
  },
} as const;

/** A consent request id. */
export const CONSENT_ID_PARAMS = {
  type: "object",
  additionalProperties: false,
  required: ["id"],
  properties: { id: { type: "string", pattern: "^cr_[0-9a-f]{32}$" } },
} as const;

/** Query of `GET /v1/consent`. */
export const CONSENT_LIST_QUERY = {
  type: "object",
  additionalProperties: false,
  properties: {
    status: { type: "string", enum: ["pending"] },
    limit: { type: "string", pattern: "^[0-9]{1,9}$", description: "requests per page (1 to 200, default 50)" },
    after: {
      type: "string",
      pattern: "^[A-Za-z0-9_-]{1,2048}$",
      description: "the `next` of the previous page (an opaque cursor): the requests after it",
    },
  },
} as const;

/** How far an approval reaches. */
export const SCOPE_SCHEMA = {
  oneOf: [
    { type: "string", enum: ["once", "session"] },
    {
      type: "object",
      additionalProperties: false,
      required: ["until"],
      properties: { until: { type: "string", format: "date-time" } },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["for"],
      properties: { for: { type: "string", pattern: "^[0-9]+[smhd]$" } },
    },
  ],
} as const;

/** A person's answer (`POST /v1/consent/{id}/response`). */
export const CONSENT_RESPONSE_BODY = {
  type: "object",
  additionalProperties: false,
  required: ["decision"],
  properties: {
    decision: { type: "string", enum: ["approved", "denied", "approved_with_modifications"] },
    scope: SCOPE_SCHEMA,
    modifications: { type: "object", minProperties: 1 },
    reason: {
      type: "string",
      maxLength: 500,
      description: "why (told to the agent, signed into the consent response): printable characters only",
    },
    approver_id: {
      type: "string",
      minLength: 1,
      maxLength: 128,
      description:
        "recorded as api:ID (printable characters only); a named approver's name takes that approver's own token",
    },
    nonce: { type: "string", maxLength: 128, description: "the request's nonce; the answer is refused if it differs" },
  },
} as const;

const DIGITS = { type: "string", pattern: "^[0-9]{1,9}$" } as const;
const FILTER = { type: "string", minLength: 1, maxLength: 256 } as const;

/** Query of `GET /v1/audit`. */
export const AUDIT_QUERY = {
  type: "object",
  additionalProperties: false,
  properties: {
    limit: { ...DIGITS, description: "events per page (1 to 500, default 50)" },
    before: { ...DIGITS, description: "the `next` of the previous page" },
    event_type: FILTER,
    tool: FILTER,
    agent: FILTER,
    decision: FILTER,
    request_id: FILTER,
    q: { ...FILTER, description: "case-insensitive text anywhere in the event" },
  },
} as const;

/** The OpenAPI security of a route that reads: the agents' token or the approvers'. */
export const READ_SECURITY = [{ bearer: [] }, { approver: [] }];

/**
 * The `Retry-After` header (RFC 9110 §10.2.3) of an answer that may say when to come back, as the OpenAPI
 * document shows it: whole seconds, rounded up, at least 1; `when` says when it is sent.
 */
export function retryAfterHeader(when: string): {
  readonly "Retry-After": { readonly type: "integer"; readonly minimum: 1; readonly description: string };
} {
  return {
    "Retry-After": {
      type: "integer",
      minimum: 1,
      description: `whole seconds to wait before asking again (rounded up, at least 1): ${when}`,
    },
  };
}

/** An answer schema with its `Retry-After` declared ({@link retryAfterHeader}). */
export function withRetryAfter<T extends object>(
  schema: T,
  when: string,
): T & { readonly headers: ReturnType<typeof retryAfterHeader> } {
  return { ...schema, headers: retryAfterHeader(when) };
}

/**
 * 503 of a route that reads or writes state: `state_unavailable` (the state store is busy or cannot be
 * reached) says `Retry-After: 1`; so does `audit_unavailable` on PostgreSQL, where the chain resumes by itself.
 */
export const UNAVAILABLE_RESPONSE = withRetryAfter(
  { ...ERROR_BODY_SCHEMA, "x-response-description": "the state store or the audit trail cannot be used right now" },
  "always on state_unavailable; on audit_unavailable only on PostgreSQL (the audit.jsonl file needs a restart: none)",
);

/**
 * 403 of a route that decides: `agent_mismatch` (the body names another agent than the token's, or, with a
 * token that names none, an agent that has a token of its own) or `server_not_allowed` (the token's agent may
 * not decide for the server named, `serve.agent_servers`).
 */
export const AGENT_REFUSED_RESPONSE = {
  ...ERROR_BODY_SCHEMA,
  "x-response-description":
    "agent_mismatch: the body names another agent than the token's, or (a token that names none) an agent with " +
    "a token of its own; server_not_allowed: the token's agent may not decide for the server named " +
    "(serve.agent_servers)",
} as const;

/** Error answers every route may give. */
export const ERROR_RESPONSES = {
  400: ERROR_BODY_SCHEMA,
  401: ERROR_BODY_SCHEMA,
  503: UNAVAILABLE_RESPONSE,
} as const;

/** The routes as the OpenAPI document lists them. */
export const ROUTE_ENUM = [...ROUTES];
