export type {
  Decide,
  DecideContext,
  CallObserver,
  ExecutionAdmission,
  ResultOptions,
  CredentialHook,
  PlanHook,
  ConsentAsk,
  RequestedConsent,
  ConsentOutcome,
  ConsentBroker,
  AuditSink,
} from "./types.js";
export { createDefaultDecide, type DefaultDecideOptions } from "./default-decide.js";
export { createDefaultBroker } from "./default-broker.js";
export {
  gateToolCall,
  decideSafely,
  toActionRequest,
  type GateDeps,
  type GatedCall,
  type GateVerdict,
  type GateStop,
} from "./gate-tool-call.js";
export {
  toolError,
  refusalText,
  editRefusalText,
  describeRule,
  describeDecider,
  DECISION_META_KEY,
} from "./tool-error.js";
export {
  judgeEdit,
  answeredBy,
  askedLevel,
  MAX_EDIT_QUESTIONS,
  judgeOnce,
  type AnsweredQuestions,
  type EditJudgement,
  type JudgeEdited,
} from "./edit-judgement.js";
export { createApprovalMemory, type ApprovalMemory, type RememberedApproval } from "./approval-memory.js";
export { injectCallCredentials, withoutSecretValues, type CredentialStep } from "./call-credentials.js";
export { newId } from "./new-id.js";
export { admitExecution, ExecutionRefused, type Admitted } from "./admit-execution.js";
