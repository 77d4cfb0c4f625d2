/** Agent Claim Protocol: the provider (`acp claim serve`) and the agent-side client. */
export { createClaimServer, type ClaimServer, type ClaimServerOptions } from "./http/server.js";
export { DEFAULT_HOSTS, classifyHost, type ClaimHosts, type OriginKind } from "./http/origins.js";
export { FAILURE_BODY, FAILURE_HEADERS, FAILURE_STATUS } from "./http/failure.js";
export { coarseSource, type ClaimLogEntry } from "./http/context.js";
export { CLAIM_MIGRATIONS } from "./store/migrations.js";
export type {
  ChargeInput,
  ClaimStore,
  ClaimInput,
  ReputationCharge,
  CreateSandboxInput,
  CredentialKind,
  FaqRow,
  PublishResult,
  HandleStage,
  SandboxRow,
  SandboxState,
} from "./store/claim-store.js";
export { ENDED_RETENTION_MS } from "./store/claim-store.js";
export { SqliteClaimStore } from "./store/sqlite-claim-store.js";
export { PostgresClaimStore } from "./store/postgres-claim-store.js";
export { CLAIM_POSTGRES_MIGRATIONS } from "./store/postgres-migrations.js";
export { openClaimPostgres } from "./store/open-claim-postgres.js";
export { createSecretBox, LoneSurrogateError, type SecretBox } from "./secrets/keyed-hash.js";
export { handleOf, takeDown, type TakedownResult } from "./admin/takedown.js";
export { AdmissionControl, type AdmissionOptions } from "./admission/admission-control.js";
export {
  ADMISSION_MODES,
  parseAdmissionConfig,
  type AdmissionMode,
  type AdmissionPolicyOptions,
  type ConfigIssue,
} from "./admission/admission-config.js";
export {
  ADMISSION_TOKEN_HEADER,
  ADMISSION_TOKEN_TYPE,
  MAX_TOKEN_USES,
  issuerKeyOf,
  newIssuerKey,
  signAdmissionToken,
  verifyAdmissionToken,
  type AdmissionClaims,
  type IssuerKey,
  type TokenRefusal,
  type TokenRequest,
  type TrustedIssuer,
} from "./admission/admission-token.js";
export {
  ReputationPolicy,
  decayScore,
  rangeKey,
  subjectKey,
  type ReputationEvent,
  type ReputationOptions,
} from "./admission/reputation.js";
export { checkPow, leadingZeroBits, POW_ALGORITHM, POW_NONCE_PATTERN } from "./pow/leading-zeros.js";
export { issueChallenge, verifyChallenge, CHALLENGE_TTL_MS, type IssuedChallenge } from "./pow/challenge.js";
export { renderSafeMarkdown, unsafeMarkdownReason, escapeHtml } from "./content/safe-markdown.js";
export {
  FAQ_LIMITS,
  parseFaq,
  parseQuestion,
  type FaqBody,
  type FaqQuestion,
  type FaqSettings,
} from "./content/faq.js";
export { IDENTIFIER_ENTROPY_BITS, newClaimCode, normalizeClaimCode, newPublicHandle } from "./ids/random-ids.js";
export { solvePow, solvePowNaive, wasmKernel, type PowKernel, type SolveOptions } from "./pow/solver.js";
export { solveMidstate, scanMidstate, powNonce } from "./pow/sha256-midstate.js";
export { powLayout, LANE_CANDIDATES, POW_LANES, type PowLayout } from "./pow/sha256-layout.js";
export { instantiateWasmKernel, scanWasm, wasmKernelBytes, type WasmKernel } from "./pow/sha256-wasm.js";
export {
  ClaimClient,
  ClaimClientError,
  type AgentSandbox,
  type FaqInput,
  type PublishedFaq,
  type ClaimClientOptions,
} from "./client/claim-client.js";
export {
  nodeTransport,
  RESPONSE_LIMITS,
  type NodeTransportOptions,
  type Transport,
  type ClientResponse,
} from "./client/transport.js";
export { POW_LIMITS } from "./client/bounded-solve.js";
