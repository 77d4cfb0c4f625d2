/**
 * `@acp/server`: the decision service (`acp serve`): the HTTP API (`/pre-tool-check`, `/v1/…`), the
 * MCP tool `aana_pre_tool_check` (streamable HTTP and stdio), the web console, and the store
 * interfaces it runs on (SQLite by default, PostgreSQL for several nodes).
 */
export { AGENT_TOKEN_NAME, createAcpServer, type AcpServer, type AcpServerOptions } from "./server.js";
export { createHttpApp, DEFAULT_BODY_LIMIT, type HttpAppOptions } from "./http/app.js";
export {
  SERVER_ERROR_CODES,
  errorBody,
  HttpError,
  type ServerErrorCode,
  type ServerErrorBody,
} from "./http/error-body.js";
export { CONTENT_SECURITY_POLICY } from "./http/security-headers.js";
export { parsePublicUrl, type PublicUrl } from "@acp/proxy";
export { createMetrics, CONSENT_LATENCY_BUCKETS, type ServerMetrics, type FrontEnd } from "./metrics/metrics.js";
export {
  createDecisionService,
  ConsentQueueFullError,
  AuditUnavailableError,
  type DecisionService,
  type DecisionServiceOptions,
  type DecideAnswer,
  type ConsentResult,
} from "./service/decision-service.js";
export { anyServerPolicy } from "./service/any-server-policy.js";
export {
  anyServerPipelineOf,
  countOncePerCall,
  useAttestationOncePerCall,
  serverReadings,
  strictestReadingPipeline,
  type ServerReading,
  type ServerReadingInputs,
} from "./service/server-readings.js";
export { mergeDecision, type PreToolCheckEnvelope, type PipelineSummary } from "./service/merge-envelope.js";
export { createAuditSink, type AuditAppender } from "./service/audit-recorder.js";
export { createConsentProofs, type ServiceKeyPair } from "./service/consent-proofs.js";
export {
  viewConsent,
  answerConsent,
  recordForwardedAnswer,
  type ConsentView,
  type ConsentAnswerInput,
} from "./service/consent-view.js";
export { createPreToolCheckMcpServer, PRE_TOOL_CHECK_TOOL } from "./mcp/pre-tool-check-tool.js";
export { serveMcpStdio } from "./mcp/stdio.js";
export { openSqliteStores, type SqliteStoresOptions } from "./store/sqlite-stores.js";
export { openPostgresStores, type PostgresStoresOptions } from "./store/postgres/postgres-stores.js";
export { openServerStores, type ServerStoresOptions } from "./store/open-server-stores.js";
export { openConsoleAuth, type ConsoleAuthHandle } from "./store/open-console-auth.js";
export { openPendingConsent, type PendingConsentHandle } from "./store/open-pending-consent.js";
export { SERVER_POSTGRES_MIGRATIONS } from "./store/postgres/migrations.js";
export { createPostgresConsoleAuthStore } from "./store/postgres/console-auth.js";
export { createPostgresAuditTrail, type PostgresAuditTrailOptions } from "./store/postgres/audit-trail.js";
export { openNotifiedChangeFeed, type NotifiedChangeFeedOptions } from "./store/postgres/notified-change-feed.js";
export {
  resolveStorageUrl,
  safeStorageUrl,
  explainStorageError,
  STORAGE_URL_ENV,
  type ResolvedStorageUrl,
  type StorageUrlSource,
} from "./store/storage-url.js";
export { createSqliteConsoleAuthStore, createRandomToken } from "./store/sqlite-console-auth.js";
export { createFileAuditTrail, type FileAuditTrailOptions } from "./store/file-audit-trail.js";
export {
  createPolledChangeFeed,
  type PolledChangeFeed,
  type PolledChangeFeedOptions,
} from "./store/polled-change-feed.js";
export { createPolledAnswers, type PolledAnswers } from "./store/polled-answers.js";
export { createTableChannel, type TableChannelOptions } from "./service/table-channel.js";
export type * from "./store/types.js";
export {
  SESSION_COOKIE,
  TLS_SESSION_COOKIE,
  sessionCookieName,
  SESSION_TTL_MS,
  LINK_TTL_MS,
  checkApproverName,
} from "./console/session.js";
export { writeServeState, readServeState, removeServeState, serveStatePath, type ServeState } from "./serve-state.js";
export {
  openEmbeddedServer,
  type EmbeddedServer,
  type EmbeddedServerOptions,
  type StoresPipeline,
} from "./embedded.js";
