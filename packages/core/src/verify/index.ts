/**
 * `acp policy verify`: intent + policy + session settings as a finite model, checked exhaustively for bounded
 * sessions against four invariants, with every call judged by the real pipeline and session runtime (through
 * an injected executor). See docs/guides/policy-verify.md.
 */
export {
  ARG_CLASSES,
  INVARIANT_IDS,
  type ArgClass,
  type Counterexample,
  type InvariantId,
  type ModelAction,
  type ModelValue,
  type StepDecision,
  type TokenProbeResult,
  type VerifyBounds,
  type VerifyExecutor,
  type VerifyModel,
  type VerifyReport,
  type VerifyTraceEvent,
} from "./types.js";
export { collectActions, sampleGlob, OTHER_ACTION, MAX_MODEL_ACTIONS, type ActionName } from "./alphabet.js";
export { buildVerifyModel, MODEL_VALUES, SEND_CATEGORIES, type BuiltModel, type VerifyInput } from "./model.js";
export { INVARIANT_DESCRIPTIONS, brokenInvariants, type JudgedCall } from "./invariants.js";
export { exploreModel, initialEvents } from "./explore.js";
export { createTokenProbe, type TokenProbeConfig } from "./token-probe.js";
export { checkIntentAgainstPolicy } from "./consistency.js";
export { parsePositionedDocument, positionIssues, type PositionedDocument } from "./document.js";
export { formatCounterexample, formatTraceEvent } from "./counterexample.js";
