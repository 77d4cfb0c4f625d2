/**
 * The JSON schemas of the answers that `/pre-tool-check` does not describe itself: shown in the OpenAPI
 * document so a client generated from it knows what comes back. They document; they do not serialize
 * (each route writes its answer with `JSON.stringify`, {@link serializeWithJson}, so no field can be
 * dropped by a schema that lags behind), and a test validates real answers against them.
 */
import { MAX_LISTED_UNCHECKED_CONSENT } from "@acp/core";
import { ERROR_BODY_SCHEMA } from "./error-body.js";
import { ROUTE_ENUM } from "./schemas.js";

const STRING = { type: "string" } as const;
const STRING_OR_NULL = { type: ["string", "null"] } as const;
const TIME = { type: "string", format: "date-time" } as const;
const OPEN_OBJECT = { type: "object", additionalProperties: true } as const;

/** One consent request as the API shows it (`ConsentView`). */
export const CONSENT_VIEW_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: [
    "id",
    "status",
    "server",
    "tool",
    "session_id",
    "created_at",
    "expires_at",
    "decided_at",
    "request",
    "reasons",
    "answer",
  ],
  properties: {
    id: { type: "string", pattern: "^cr_[0-9a-f]{32}$" },
    status: { type: "string", enum: ["pending", "approved", "denied", "expired", "withdrawn"] },
    server: STRING,
    tool: STRING,
    session_id: STRING_OR_NULL,
    created_at: TIME,
    expires_at: TIME,
    decided_at: { type: ["string", "null"], format: "date-time" },
    request: {
      type: ["object", "null"],
      additionalProperties: true,
      description: "the consent request (§4.1), secret-looking parameters redacted; null if unreadable",
    },
    reasons: {
      type: ["array", "null"],
      items: OPEN_OBJECT,
      description: "why the pipeline asked: {source, code, message, rule?}",
    },
    answer: {
      type: ["object", "null"],
      additionalProperties: true,
      description: "the recorded answer (decision, approver, scope, reason, modifications), without its nonce",
    },
  },
} as const;

/** One request as `GET /v1/consent` lists it (`ListedConsentView`): a `ConsentView`, maybe shortened. */
const LISTED_CONSENT_ANSWER = {
  ...CONSENT_VIEW_ANSWER,
  required: [...CONSENT_VIEW_ANSWER.required, "shortened"],
  properties: {
    ...CONSENT_VIEW_ANSWER.properties,
    shortened: {
      type: ["object", "null"],
      additionalProperties: false,
      required: ["omitted_bytes", "arguments_cut", "whole"],
      description:
        "null when listed whole; else the arguments (`request.action.parameters`) were cut to their first " +
        "values in order (4,096 bytes of JSON), a long text to its ends: fetch `whole` for the request as raised",
      properties: {
        omitted_bytes: { type: "integer", minimum: 0, description: "bytes of JSON left out" },
        arguments_cut: { type: "boolean", description: "argument values were left out, not only texts' middles" },
        whole: { type: "string", description: "`/v1/consent/{id}`: the whole request" },
      },
    },
  },
} as const;

/** `GET /v1/consent`. */
export const CONSENT_LIST_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: ["requests", "next"],
  properties: {
    requests: { type: "array", items: LISTED_CONSENT_ANSWER, description: "oldest first, one page" },
    next: {
      type: ["string", "null"],
      description: "the cursor of the next page (`?after=`); null after the last",
    },
  },
} as const;

/** A person's edit the policy refuses (the call is refused although approved). */
const EDIT_REFUSED = {
  type: "object",
  additionalProperties: false,
  required: ["rule", "reasons"],
  description: "a person approved with edits the policy refuses: the call is refused; the rule and its reasons",
  properties: { rule: STRING_OR_NULL, reasons: { type: "array", items: STRING } },
} as const;

/** A person's edit that needs a question nobody was asked (`POST /v1/consent/{id}/complete`). */
const ASK_AGAIN = {
  type: "object",
  additionalProperties: false,
  required: ["rule", "level", "reasons"],
  description:
    "a person approved with edits that fall under an ask rule nobody was asked about (or ask at a stronger level): nothing runs; decide again with `arguments` to ask it",
  properties: { rule: STRING_OR_NULL, level: STRING, reasons: { type: "array", items: STRING } },
} as const;

/** `POST /v1/consent/{id}/complete`. */
export const COMPLETED_CONSENT_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: ["outcome", "request_id"],
  properties: {
    outcome: { type: "string", enum: ["approved", "denied", "expired", "withdrawn"] },
    request_id: STRING,
    reason: STRING,
    arguments: { ...OPEN_OBJECT, description: "the arguments to run (a person's edits applied, secrets redacted)" },
    consent_response: { ...OPEN_OBJECT, description: "the signed consent response (§4.2)" },
    edit_refused: EDIT_REFUSED,
    ask_again: ASK_AGAIN,
  },
} as const;

/** The pipeline's `Decision`. */
const DECISION = {
  type: "object",
  additionalProperties: true,
  required: ["route", "action", "rule", "category", "risk_level", "reasons", "verdicts"],
  properties: {
    route: { type: "string", enum: ROUTE_ENUM },
    action: { type: "string", enum: ["allow", "ask", "deny"] },
    rule: STRING_OR_NULL,
    category: STRING,
    risk_level: STRING,
    reasons: { type: "array", items: OPEN_OBJECT },
    verdicts: { type: "array", items: OPEN_OBJECT },
    policy_hash: {
      type: "string",
      pattern: "^sha256:[0-9a-f]{64}$",
      description:
        "the policy version the decision used: the sha256 of the policy file's bytes (`acp serve` reloads an edited file)",
    },
  },
} as const;

/** `POST /v1/decide`. */
export const DECIDE_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: ["decision_id", "route", "decision"],
  properties: {
    decision_id: { type: "string", pattern: "^dc_[0-9a-f]{32}$" },
    route: {
      type: "string",
      enum: ROUTE_ENUM,
      description: "after a wait: accept only when a person approved (and the policy does not refuse their edits)",
    },
    decision: DECISION,
    consent: {
      type: "object",
      additionalProperties: false,
      required: ["outcome", "request_id"],
      description: "with wait=true on ask/defer: how the consent request ended",
      properties: {
        outcome: { type: "string", enum: ["approved", "denied", "expired", "withdrawn"] },
        request_id: STRING_OR_NULL,
        reason: STRING,
        scope: {},
        arguments: {
          ...OPEN_OBJECT,
          description: "the arguments to run with (edited ones when a person changed them)",
        },
        edit_refused: EDIT_REFUSED,
      },
    },
  },
} as const;

/** `GET /v1/audit`. */
export const AUDIT_PAGE_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: ["events", "total", "next"],
  properties: {
    events: {
      type: "array",
      description: "newest first",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["line", "event"],
        properties: { line: { type: "integer", minimum: 1 }, event: OPEN_OBJECT },
      },
    },
    total: { type: "integer", minimum: 0, description: "events in the whole chain (not the matches)" },
    next: { type: ["integer", "null"], description: "pass as `before` for the next page; null on the last" },
  },
} as const;

/** A checkpoint as the verifier saw it (`last_checkpoint`, `after_problem.last_signed_checkpoint`). */
const CHECKPOINT_SEEN = {
  type: ["object", "null"],
  additionalProperties: false,
  required: ["line", "count", "head_hash", "timestamp"],
  properties: {
    line: { type: "integer", minimum: 1 },
    count: { type: "integer", minimum: 0 },
    head_hash: STRING_OR_NULL,
    timestamp: STRING,
  },
} as const;

/** `GET /v1/audit/verify`. */
export const AUDIT_VERIFY_ANSWER = {
  type: "object",
  additionalProperties: false,
  required: [
    "valid",
    "ok",
    "count",
    "head",
    "checkpoints",
    "last_checkpoint",
    "events_after_last_checkpoint",
    "signatures_checked",
    "consent_responses",
    "problem",
    "after_problem",
  ],
  properties: {
    valid: { type: "boolean", description: "the verdict: the chain is intact" },
    ok: { type: "boolean", description: "the same as `valid` (what this route said before it)" },
    count: { type: "integer", minimum: 0 },
    head: STRING_OR_NULL,
    checkpoints: { type: "integer", minimum: 0 },
    last_checkpoint: CHECKPOINT_SEEN,
    events_after_last_checkpoint: { type: "integer", minimum: 0 },
    signatures_checked: { type: "boolean" },
    consent_responses: {
      type: ["object", "null"],
      additionalProperties: false,
      description:
        "the signed consent responses of consent_approved and consent_denied events, as acp audit verify --json " +
        "gives them (consentResponses): checked with the public key against the action recorded beside them, " +
        "or not checkable, each of those (the first 1000) with its line and why; null without a public key",
      required: ["checked", "unchecked", "not_checkable"],
      properties: {
        checked: { type: "integer", minimum: 0 },
        unchecked: { type: "integer", minimum: 0 },
        not_checkable: {
          type: "array",
          maxItems: MAX_LISTED_UNCHECKED_CONSENT,
          items: {
            type: "object",
            additionalProperties: false,
            required: ["line", "why"],
            properties: {
              line: { type: "integer", minimum: 1 },
              why: {
                enum: ["withheld", "omitted", "missing"],
                description:
                  "withheld: the action was withheld as redacted; omitted: a value was cut to fit the line " +
                  "(or the event's metadata was replaced); missing: written before consent events recorded the action",
              },
              signature_checked: {
                const: true,
                description:
                  "omitted only: the signature still verified against the consent_action_hash recorded beside the cut action",
              },
            },
          },
        },
      },
    },
    problem: {
      type: ["object", "null"],
      additionalProperties: true,
      description: "the first broken event: {line, code, message, where: log | anchor}",
      properties: { line: { type: "integer" }, code: STRING, message: STRING, where: { enum: ["log", "anchor"] } },
    },
    after_problem: {
      type: ["object", "null"],
      additionalProperties: false,
      description:
        "what could still be told of the lines after the first problem (all of the log's for a problem of the " +
        "anchor), as acp audit verify reports it: never makes the chain intact; null when intact or nothing was read",
      required: [
        "lines",
        "linked",
        "checkpoints",
        "signed_checkpoints",
        "last_signed_checkpoint",
        "complete",
        "anchor",
      ],
      properties: {
        lines: { type: "integer", minimum: 0 },
        linked: { type: "integer", minimum: 0 },
        checkpoints: { type: "integer", minimum: 0 },
        signed_checkpoints: { type: ["integer", "null"], minimum: 0 },
        last_signed_checkpoint: CHECKPOINT_SEEN,
        complete: { type: "boolean" },
        anchor: {
          type: ["object", "null"],
          additionalProperties: false,
          required: ["expected_line", "line"],
          properties: { expected_line: { type: "integer" }, line: { type: ["integer", "null"] } },
        },
      },
    },
  },
} as const;

/** `GET /healthz` and `GET /readyz`. */
export const STATUS_ANSWER = (value: string) =>
  ({
    type: "object",
    additionalProperties: false,
    required: ["status"],
    properties: { status: { type: "string", const: value } },
  }) as const;

/** A JSON-RPC 2.0 message or batch (`POST /mcp`); the MCP SDK judges it. */
export const MCP_BODY = {
  description: "a JSON-RPC 2.0 message (initialize, tools/list, tools/call aana_pre_tool_check) or a batch",
  oneOf: [
    { type: "object", required: ["jsonrpc"], properties: { jsonrpc: { const: "2.0" } } },
    { type: "array", items: { type: "object" } },
  ],
} as const;

/** A JSON-RPC 2.0 error answer of the MCP SDK (an unreadable message, an `Accept` without SSE). */
const JSON_RPC_ERROR = {
  type: "object",
  required: ["jsonrpc", "error"],
  properties: {
    jsonrpc: { const: "2.0" },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: STRING },
    },
    id: { type: ["string", "integer", "null"] },
  },
} as const;

/** The answers of `POST /mcp` other than the app's: what the MCP SDK writes. */
export const MCP_ANSWERS = {
  200: {
    description: "a JSON-RPC 2.0 answer (an array of them for a batch)",
    oneOf: [
      { type: "object", additionalProperties: true },
      { type: "array", items: { type: "object" } },
    ],
  },
  202: { description: "only notifications or answers were sent: accepted, no body", type: "null" },
  406: {
    ...JSON_RPC_ERROR,
    description: "the Accept header does not name both application/json and text/event-stream",
  },
  /** 400: the token check's error body, or the SDK's JSON-RPC error for a message it cannot read. */
  400: {
    description:
      "an error body (a malformed Authorization header, JSON, or a body that is no JSON-RPC message) or a JSON-RPC parse error",
    anyOf: [ERROR_BODY_SCHEMA, JSON_RPC_ERROR],
  },
} as const;

/** A text answer's schema in the OpenAPI document. */
export const TEXT_ANSWER = (mediaType: string, description: string) =>
  ({ description, content: { [mediaType]: { schema: { type: "string" } } } }) as const;

/** The serializer of routes whose answer schemas only document: the answer as `JSON.stringify` writes it. */
export function serializeWithJson(): (data: unknown) => string {
  return (data) => JSON.stringify(data);
}
