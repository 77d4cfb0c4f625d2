/**
 * The session runtime: intent, frozen plan, provenance, authority tokens, transition rules, budgets and the
 * kill switch — untrusted data never becomes authority. See docs/reference/session-runtime.md.
 */
export { SESSION_CODES, describeSessionCode, type SessionCode } from "./codes.js";
export { SessionError, isSessionError } from "./errors.js";
export {
  SESSION_STATES,
  SESSION_TRANSITIONS,
  nextSessionState,
  isFinalSessionState,
  type SessionState,
  type SessionOperation,
  type SessionTransition,
} from "./state-machine.js";
export { INTENT_JSON_SCHEMA } from "./intent-schema.js";
export { PLAN_JSON_SCHEMA } from "./plan-schema.js";
export {
  compileIntent,
  validateIntent,
  assertIntent,
  type Intent,
  type IntentBudgets,
  type CompiledIntent,
} from "./intent.js";
export {
  compilePlan,
  fitPlan,
  fitsPlanStep,
  type Plan,
  type PlanStep,
  type ArgumentConstraint,
  type CompiledPlan,
  type PlanFit,
} from "./plan.js";
export { actionNamesOf, primaryActionName, compileActionPatterns, type ActionPatterns } from "./action-name.js";
export {
  PIECE_KINDS,
  extractValueTokens,
  containsDelimited,
  containsWhole,
  normalizeText,
  unescapeLiterals,
  decodeCharacterReferences,
  visibleText,
  comparableText,
  urlHost,
  type PieceKind,
  type ValueToken,
} from "./value-tokens.js";
export {
  MAX_STORE_CHARS,
  createSharedStoreBudget,
  tightestStoreBudget,
  chargeStoreBudget,
  type SharedStoreBudget,
} from "./store-budget.js";
export { EARLIER_SESSION, REMEMBERED_KINDS, rememberedIdentities, type ProvenanceMemory } from "./provenance-memory.js";
export {
  PROVENANCE_LABELS,
  MAX_ENTRY_CHARS,
  MIN_TRUSTED_OCCURRENCE,
  MIN_VALUE_PIECE,
  MIN_TRUSTED_NAME,
  createProvenanceEntry,
  deriveProvenance,
  type ProvenanceLabel,
  type ProvenanceEntry,
  type ProvenanceEntryOptions,
  type PieceProvenance,
  type DeriveProvenanceOptions,
} from "./provenance.js";
export {
  readStructure,
  directoryEntries,
  wholeIdentity,
  MAX_STRUCTURED_CHARS,
  MAX_RECORD_NAMES,
  type StructuredContent,
  type StructuredRecord,
} from "./structured-content.js";
export {
  detectInstructions,
  INSTRUCTION_THRESHOLD,
  MAX_SCANNED_CHARS,
  WEAK_ONLY_CAP,
  type InstructionReport,
  type InstructionSignal,
  type InstructionSignalKind,
  type DetectInstructionsOptions,
} from "./instruction-detector.js";
export {
  parseTransitionRules,
  compileTransitionRules,
  matchTransitions,
  type TransitionRule,
  type CompiledTransitionRule,
  type FiredTransition,
} from "./transitions.js";
export {
  parseSessionSettings,
  DEFAULT_SESSION_SETTINGS,
  type ReadSettings,
  type SessionSettings,
  type DirectorySetting,
  type KillSwitchSettings,
} from "./session-settings.js";
export {
  MIN_AUTHORITY_KEY_BYTES,
  signAuthorityToken,
  verifyAuthorityTokenSignature,
  readAuthorityToken,
  encodeAuthorityToken,
  decodeAuthorityToken,
  type AuthorityToken,
  type AuthorityTokenClaims,
  type TokenCheck,
} from "./authority-token.js";
export {
  DECLINING_ESCALATION_HANDLER,
  type EscalationHandler,
  type EscalationQuestion,
  type EscalationKind,
  type Confirmation,
} from "./escalation.js";
export type { SessionEvent, SessionEventType } from "./events.js";
export { judgeRequest, CONSEQUENTIAL_CATEGORIES, type SessionJudgment, type ExecutedCall } from "./evaluate-session.js";
export { describeActionVerb, taintQuestion } from "./semantic-question.js";
export type { AuthorizeResult, IssueTokenOptions } from "./session-gate.js";
export type { ToolResultOptions } from "./session-records.js";
export { createSession, type Session, type SessionOptions, type ConfirmationProposal } from "./session.js";
export { MAX_KEPT_EVENTS, MAX_KEPT_HISTORY } from "./session-core.js";
export { MAX_ENTRIES } from "./session-records.js";
export { MAX_AUTHORIZED_UNRECORDED } from "./session-executions.js";
export { sessionSource } from "./session-source.js";
export { createSessionDirectory, type SessionDirectory } from "./session-directory.js";
