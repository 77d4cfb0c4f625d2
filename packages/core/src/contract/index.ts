/**
 * The Agent Action Contract v1: schema, validation, route inference, the decision envelope, the
 * execution rule, the TypeScript SDK names and the pipeline source.
 */
export * from "./vocabulary.js";
export { CONTRACT_JSON_SCHEMA } from "./schema.js";
export {
  validateContractEvent,
  validateParsedContractEvent,
  assertContractEvent,
  MAX_CONTRACT_ISSUES,
} from "./validate.js";
export { parseContractEventJson, MAX_CONTRACT_EVENT_BYTES } from "./parse.js";
export {
  assessEvidence,
  isUsableEvidence,
  summarizeEvidence,
  type EvidenceAssessment,
  type EvidenceSummary,
} from "./evidence.js";
export { inferContractRoute, CONTRACT_ROUTE_TABLE, type ContractInference, type ContractReason } from "./infer.js";
export {
  decideContractEvent,
  refuseContractEnvelope,
  MAX_AUDIT_ARGUMENT_KEYS,
  type ArchitectureDecision,
  type ContractAudit,
  type ContractEnvelope,
} from "./envelope.js";
export { shouldExecuteTool } from "./execute.js";
export {
  toolPrecheckEvent,
  checkToolPrecheck,
  checkParsedToolPrecheck,
  checkToolCall,
  gateAction,
  type ToolPrecheckInput,
} from "./sdk.js";
export { evaluateActionContract } from "./source.js";
export { CONTRACT_ISSUE_CODES, CONTRACT_HARD_BLOCKERS, CONTRACT_INFO_REASONS } from "./codes.js";
