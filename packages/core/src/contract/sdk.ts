/**
 * The TypeScript SDK names of the Agent Action Contract v1: build an event, check it, and ask
 * whether the tool may execute.
 */
import type { Result } from "../issues/index.js";
import type { Route } from "../route/index.js";
import { decideContractEvent, refuseContractEnvelope, type ContractEnvelope } from "./envelope.js";
import { validateContractEvent, validateParsedContractEvent } from "./validate.js";
import type {
  AuthorizationSubject,
  ContractAuthorizationState,
  ContractEvent,
  ContractRiskDomain,
  ContractToolCategory,
  CONTRACT_SCHEMA_VERSION,
  EvidenceRef,
} from "./vocabulary.js";

/** The camelCase input of {@link toolPrecheckEvent}; evidence refs are passed in their wire form. */
export interface ToolPrecheckInput {
  readonly toolName: string;
  readonly toolCategory: ContractToolCategory;
  readonly authorizationState: ContractAuthorizationState;
  readonly evidenceRefs: readonly EvidenceRef[];
  readonly riskDomain: ContractRiskDomain;
  readonly proposedArguments: Readonly<Record<string, unknown>>;
  readonly recommendedRoute: Route;
  readonly schemaVersion?: typeof CONTRACT_SCHEMA_VERSION;
  readonly requestId?: string;
  readonly agentId?: string;
  readonly userIntent?: string;
  readonly authorizationSubject?: AuthorizationSubject;
}

/**
 * Builds the snake_case v1 event from camelCase input. It does not validate: pass the result to
 * {@link checkToolPrecheck}, which does. Optional fields appear only when given.
 */
export function toolPrecheckEvent(input: ToolPrecheckInput): ContractEvent {
  return {
    ...(input.schemaVersion !== undefined ? { schema_version: input.schemaVersion } : {}),
    ...(input.requestId !== undefined ? { request_id: input.requestId } : {}),
    ...(input.agentId !== undefined ? { agent_id: input.agentId } : {}),
    tool_name: input.toolName,
    tool_category: input.toolCategory,
    authorization_state: input.authorizationState,
    evidence_refs: [...input.evidenceRefs],
    risk_domain: input.riskDomain,
    proposed_arguments: input.proposedArguments,
    recommended_route: input.recommendedRoute,
    ...(input.userIntent !== undefined ? { user_intent: input.userIntent } : {}),
    ...(input.authorizationSubject !== undefined ? { authorization_subject: input.authorizationSubject } : {}),
  };
}

/**
 * Checks an Agent Action Contract v1 event and returns the decision envelope. Never throws: an
 * invalid event (or any failure inside the check) is a refuse envelope with `validation_errors`
 * and hard blockers. Execute the tool only when {@link shouldExecuteTool} says so.
 */
export function checkToolPrecheck(event: unknown): ContractEnvelope {
  return check(event, validateContractEvent);
}

/**
 * {@link checkToolPrecheck} for an event the caller has just parsed from JSON text and owns (an HTTP
 * or MCP body): the same envelope, without copying an event that is already its own JSON form (see
 * `validateParsedContractEvent`). The caller must not change the event afterwards.
 */
export function checkParsedToolPrecheck(event: unknown): ContractEnvelope {
  return check(event, validateParsedContractEvent);
}

function check(event: unknown, validate: (event: unknown) => Result<ContractEvent>): ContractEnvelope {
  try {
    const valid = validate(event);
    return valid.ok ? decideContractEvent(valid.value) : refuseContractEnvelope(valid.issues);
  } catch (err) {
    const message = `the check failed: ${err instanceof Error ? err.message : String(err)}`;
    return refuseContractEnvelope([{ code: "check_failed", path: [], message }], ["check_failed"]);
  }
}

/** Alias of {@link checkToolPrecheck} (the Python SDK's `check_tool_call`). */
export const checkToolCall: (event: unknown) => ContractEnvelope = checkToolPrecheck;

/** Alias of {@link checkToolPrecheck} (the Python SDK's `gate_action`). */
export const gateAction: (event: unknown) => ContractEnvelope = checkToolPrecheck;
