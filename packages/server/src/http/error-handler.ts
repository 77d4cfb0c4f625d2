/** The one place failures become HTTP answers: a status, a stable code, a message a person can act on. */
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { PostgresStoreError } from "@acp/store";
import type { ServerMetrics } from "../metrics/metrics.js";
import {
  AgentMismatchError,
  AuditUnavailableError,
  ConsentQueueFullError,
  ServerNotAllowedError,
} from "../service/decision-service.js";
import { AUDIT_UNAVAILABLE_MESSAGE } from "../service/service-errors.js";
import { errorBody, HttpError, type ServerErrorCode } from "./error-body.js";
import { NO_NUL_PATTERN } from "./schemas.js";
import { securityHeaders, STRICT_TRANSPORT_SECURITY } from "./security-headers.js";

interface Mapped {
  readonly status: number;
  readonly code: ServerErrorCode;
  readonly message: string;
}

type ValidationItem = NonNullable<FastifyError["validation"]>[number];

function describeValidation(error: FastifyError): Mapped {
  const first: ValidationItem | undefined = error.validation?.[0];
  const part = error.validationContext ?? "body";
  const where = first?.instancePath === undefined || first.instancePath === "" ? part : `${part}${first.instancePath}`;
  if (first?.keyword === "additionalProperties") {
    const extra = (first.params as { additionalProperty?: unknown }).additionalProperty;
    const field = typeof extra === "string" ? extra : "";
    return { status: 400, code: "unknown_field", message: `${where}: unknown field \`${field.slice(0, 80)}\`` };
  }
  const code: ServerErrorCode = part === "querystring" || part === "params" ? "invalid_query" : "invalid_body";
  const nul = first?.keyword === "pattern" && (first.params as { pattern?: unknown }).pattern === NO_NUL_PATTERN;
  return {
    status: 400,
    code,
    message: `${where}: ${nul ? "must not hold a NUL character" : (first?.message ?? "invalid")}`,
  };
}

/** SQLite result codes of a database busy, locked or failing underneath (not of a bug or bad input). */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/;
/**
 * PostgreSQL SQLSTATE classes and codes of a server or connection that is away or overloaded: 08 connection
 * exception, 53 insufficient resources, 57P01–57P05 shut down or cancelled by the server, 40001/40P01 a
 * serialization failure or deadlock (retryable), 55P03 lock not available.
 */
const POSTGRES_UNAVAILABLE = /^(08|53)|^57P0[1-5]$|^40001$|^40P01$|^55P03$/;
/** Messages node-postgres gives a lost connection or an exhausted pool (it sets no code on these). */
const PG_DRIVER_UNAVAILABLE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Whether `error` says the state store (state.db or PostgreSQL) is busy, locked or unreachable, so the
 * request may succeed when retried: answered 503 `state_unavailable`, not 500.
 */
function isStateUnavailable(error: unknown): boolean {
  if (error instanceof PostgresStoreError)
    return ["postgres_unavailable", "postgres_store_closed", "postgres_clock_skew"].includes(error.code);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (error.name === "SqliteError") return typeof code === "string" && SQLITE_UNAVAILABLE.test(code);
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && "severity" in error)
    return POSTGRES_UNAVAILABLE.test(code);
  if (code === "ECONNREFUSED" || code === "ECONNRESET" || code === "EPIPE" || code === "ETIMEDOUT") return true;
  return PG_DRIVER_UNAVAILABLE.test(error.message);
}

/** Maps any error to its answer. Unknown errors are 500 with a generic message (details stay in the log). */
export function mapError(error: unknown): Mapped {
  if (error instanceof HttpError) return { status: error.status, code: error.code, message: error.message };
  if (error instanceof ConsentQueueFullError)
    return { status: 429, code: "consent_queue_full", message: error.message };
  if (error instanceof AuditUnavailableError)
    return { status: 503, code: "audit_unavailable", message: AUDIT_UNAVAILABLE_MESSAGE };
  if (error instanceof AgentMismatchError) return { status: 403, code: "agent_mismatch", message: error.message };
  if (error instanceof ServerNotAllowedError)
    return { status: 403, code: "server_not_allowed", message: error.message };
  if (isStateUnavailable(error))
    return {
      status: 503,
      code: "state_unavailable",
      message: "the state store is busy or cannot be reached right now: try again (see the service log)",
    };
  const e = error as Partial<FastifyError>;
  if (e.validation !== undefined) return describeValidation(error as FastifyError);
  switch (e.code) {
    case "FST_ERR_BAD_URL":
      return { status: 400, code: "bad_request", message: "the URL path is not valid (malformed percent-encoding)" };
    case "FST_ERR_MAX_PARAM_LENGTH":
      return { status: 400, code: "invalid_query", message: "a path parameter is longer than 100 characters" };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { status: 413, code: "body_too_large", message: "the body is larger than the limit" };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        status: 415,
        code: "unsupported_media_type",
        message: "unsupported content type (send application/json)",
      };
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, code: "bad_request", message: "the content length does not match the body" };
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { status: 400, code: "malformed_json", message: "the body is empty (expected a JSON object)" };
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return { status: 400, code: "malformed_json", message: "the body is not valid JSON" };
    default:
      break;
  }
  if (error instanceof SyntaxError || e.statusCode === 400) {
    return { status: 400, code: "malformed_json", message: "the body is not valid JSON" };
  }
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, code: "bad_request", message: "bad request" };
  }
  return { status: 500, code: "internal_error", message: "internal error (see the service log)" };
}

/** The `WWW-Authenticate` challenge of a 401 (or the 403 of a token without the scope) for a bearer token (RFC 6750 §3). */
const WWW_AUTHENTICATE: Partial<Record<ServerErrorCode, string>> = {
  auth_token_missing: 'Bearer realm="acp"',
  consent_api_token_required: 'Bearer realm="acp"',
  auth_token_wrong: 'Bearer realm="acp", error="invalid_token"',
  approver_token_required: 'Bearer realm="acp", error="insufficient_scope"',
};

/** How often, at most, refusals for an unavailable audit trail are logged (one line, with how many were not). */
const AUDIT_REFUSAL_LOG_MS = 10_000;

/**
 * Logs refusals because the audit trail cannot record (the database is gone, a write failed) as one line
 * per {@link AUDIT_REFUSAL_LOG_MS}, not a stack trace per request: during an outage every decision is
 * refused, and the log would grow with the traffic.
 */
function auditRefusalLogger(log: (line: string) => void, clock: () => Date): (message: string) => void {
  let lastMs = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (message) => {
    const now = clock().getTime();
    if (now - lastMs < AUDIT_REFUSAL_LOG_MS) {
      unlogged++;
      return;
    }
    const more = unlogged > 0 ? ` (${unlogged} more refused since the last line)` : "";
    log(`decision refused (503 audit_unavailable): ${message}${more}`);
    lastMs = now;
    unlogged = 0;
  };
}

/** Installs the error and not-found handlers. */
export function installErrorHandlers(
  app: FastifyInstance,
  metrics: ServerMetrics,
  log: (line: string) => void,
  clock: () => Date = () => new Date(),
): void {
  const logAuditRefusal = auditRefusalLogger(log, clock);
  app.setErrorHandler((error, _request, reply) => {
    const mapped = mapError(error);
    if (error instanceof AuditUnavailableError) {
      logAuditRefusal(error.message); // the cause, told to the log only
      if (error.recovers) void reply.header("retry-after", "1");
    } else if (mapped.code === "state_unavailable") {
      log(`state store unavailable: ${error instanceof Error ? error.message : String(error)}`);
      void reply.header("retry-after", "1");
    } else if (error instanceof ConsentQueueFullError && error.busy) void reply.header("retry-after", "1");
    else if (error instanceof HttpError && error.retryAfter !== undefined)
      void reply.header("retry-after", error.retryAfter);
    else if (mapped.status >= 500)
      log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    metrics.countError(mapped.status, mapped.code);
    const challenge = WWW_AUTHENTICATE[mapped.code];
    if (challenge !== undefined) void reply.header("www-authenticate", challenge);
    void reply.status(mapped.status).send(errorBody(mapped.code, mapped.message));
  });
  app.setNotFoundHandler((request, reply) => {
    metrics.countError(404, "not_found");
    void reply
      .status(404)
      .send(errorBody("not_found", `no route \`${request.method} ${request.url.split("?")[0]?.slice(0, 200) ?? ""}\``));
  });
}

/**
 * Errors Fastify raises before routing (a malformed percent-encoding, an over-long path parameter): the
 * same mapping, error body and counting as every other error (before: Fastify's own body shape).
 */
export function frameworkErrorHandler(
  metrics: ServerMetrics,
  tls = false,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, _request, reply) => {
    const mapped = mapError(error);
    metrics.countError(mapped.status, mapped.code);
    // before routing no hook runs: the headers every answer has are set here
    void reply
      .status(mapped.status)
      .headers({ ...securityHeaders(tls), "cache-control": "no-store" })
      .send(errorBody(mapped.code, mapped.message));
  };
}

/** How a connection-level failure is answered, before any request exists. */
function clientFailure(code: string | undefined): Mapped {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return {
      status: 408,
      code: "bad_request",
      message: "the request did not arrive in time (headers within 15 s, the body within 30 s)",
    };
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, code: "bad_request", message: "the request headers are larger than the limit" };
  }
  return { status: 400, code: "bad_request", message: "malformed HTTP request" };
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

/**
 * The `clientError` handler: a request the HTTP parser refused or a client too slow to send one gets
 * the error body every other error has (and is counted), then the connection is closed.
 */
export function clientErrorHandler(
  metrics: ServerMetrics,
  tls = false,
): (error: Error & { code?: string }, socket: Socket) => void {
  const hsts = tls ? `strict-transport-security: ${STRICT_TRANSPORT_SECURITY}\r\n` : "";
  return (error, socket) => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const mapped = clientFailure(error.code);
    metrics.countError(mapped.status, mapped.code);
    if (socket.writable) {
      const body = JSON.stringify(errorBody(mapped.code, mapped.message));
      socket.write(
        `HTTP/1.1 ${mapped.status} ${STATUS_TEXT[mapped.status] ?? "Bad Request"}\r\n` +
          `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
          `cache-control: no-store\r\nx-content-type-options: nosniff\r\n${hsts}connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
