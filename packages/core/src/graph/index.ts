/**
 * The consent graph as a policy source: parse, lint, check, map tool calls, judge requests, record reviews.
 * See docs/reference/consent-graph.md.
 */
export * from "./types.js";
export {
  parseConsentGraph,
  assertConsentGraph,
  readConsentGraphJson,
  MAX_GRAPH_LENGTH,
  MAX_GRAPH_DEPTH,
} from "./parse.js";
export type { ParseConsentGraphOptions } from "./parse.js";
export type { SourcePosition, PositionEntry, PositionedJson } from "./json-source.js";
export {
  validateConsentGraph,
  isConsentGraph,
  RESERVED_GRAPH_KEYS,
  DOMAIN_KEYS,
  GRAPH_NAME_PATTERN,
  MAX_ACTIONS_PER_LIST,
} from "./validate.js";
export { lintConsentGraph } from "./lint.js";
export { checkConsentGraph, tierOf, DEFAULT_CONFIDENCE_THRESHOLD, MAX_CLOCK_SKEW_SECONDS } from "./check.js";
export type { GraphCheckTarget } from "./check.js";
export {
  createTrustedChannelAttestation,
  verifyTrustedChannelAttestation,
  trustedChannelStatement,
  TRUSTED_CHANNEL_VERSION,
  DEFAULT_CLOCK_SKEW_SECONDS,
} from "./trusted-channel.js";
export type { TrustedChannelSubject, CreateAttestationInput, VerifyAttestationOptions } from "./trusted-channel.js";
export { isExplicitDiff } from "./explicit-diff.js";
export {
  createMemoryProposalLedger,
  proposalKey,
  proposalSighting,
  MAX_PROPOSAL_LEDGER_ENTRIES,
} from "./proposal-ledger.js";
export type {
  ProposalLedger,
  MemoryProposalLedger,
  MemoryProposalLedgerOptions,
  ProposalSighting,
  ProposalSubject,
} from "./proposal-ledger.js";
export { checkConsentDecay } from "./decay.js";
export {
  createMemoryAttestationLedger,
  attestationKey,
  useAttestationOnce,
  spendAttestation,
  spendVerifiedAttestation,
} from "./attestation-ledger.js";
export type { AttestationLedger, MemoryAttestationLedger } from "./attestation-ledger.js";
export { hashConsentGraph, hashGraphDomain, hashGraphMapping, hashVipContacts, consentGraphToJson } from "./hash.js";
export { parseGraphReviewRecord, recordGraphReview, emptyGraphReviewRecord } from "./review-record.js";
export type { GraphReviewSettings } from "./review-record.js";
export { validateGraphMapping, mapToGraphTarget, MAX_MAPPING_ENTRIES } from "./mapping.js";
export type { GraphMapping, GraphMappingEntry, GraphRefinement, ValidateGraphMappingOptions } from "./mapping.js";
export { normalizeRecipient, isRecipientVip, MAX_RECIPIENTS } from "./recipients.js";
export { evaluateConsentGraph, evaluateConsentGraphWithLedger, graphOutcomeRoute } from "./source.js";
export { GRAPH_REASON_CODES, GRAPH_ISSUE_CODES } from "./codes.js";
export type { GraphCode } from "./codes.js";
