import { canonicalJson, canonicalSha256Ref, sha256Ref } from "../canonical-json/index.js";
import type {
  ApprovedAction,
  ConsentDecisionV02,
  ConsentRequestV02,
  ConsentResponseV02,
  JsonObject,
} from "../consent/index.js";

/** The object that is signed (§6.2); keys in JCS order. */
export interface ConsentSigningPayloadV02 {
  readonly action_hash: string;
  readonly decision: ConsentDecisionV02;
  readonly modifications_hash: string | null;
  readonly nonce: string;
  readonly request_id: string;
  readonly timestamp: string;
  readonly valid_until: string;
  /** ACP extension, present only for a reusable approval: `session` or `window`. */
  readonly scope?: "session" | "window";
  /** ACP extension, present only for a session scope. */
  readonly session_id?: string;
}

/**
 * The action as approved: the request's server and tool, and its parameters with the modifications'
 * top-level keys replaced or added (`approved_with_modifications`); the request's action otherwise.
 */
export function approvedActionOf(request: ConsentRequestV02, modifications: JsonObject | null): ApprovedAction {
  const { server, tool, parameters } = request.action;
  return { server, tool, parameters: modifications === null ? parameters : { ...parameters, ...modifications } };
}

/** `sha256:` + hex SHA-256 of the JCS canonical JSON of `{server, tool, parameters}` (nothing else). */
export function actionHash(action: ApprovedAction): string {
  return canonicalSha256Ref({ server: action.server, tool: action.tool, parameters: action.parameters });
}

/** A reusable scope is signed too, so a single-use approval cannot be widened after the fact. */
function reusableScopeOf(
  conditions: ConsentResponseV02["conditions"],
): Pick<ConsentSigningPayloadV02, "scope" | "session_id"> {
  const { scope, session_id: sessionId } = conditions;
  if (scope === "window") return { scope };
  if (scope === "session") return sessionId === undefined ? { scope } : { scope, session_id: sessionId };
  return {};
}

/** The §6.2 signing payload of a response (its proof aside), bound to the approved action. */
export function signingPayloadOf(
  response: Omit<ConsentResponseV02, "proof">,
  action: ApprovedAction,
): ConsentSigningPayloadV02 {
  return {
    action_hash: actionHash(action),
    decision: response.decision,
    modifications_hash: response.modifications === null ? null : canonicalSha256Ref(response.modifications),
    nonce: response.nonce,
    request_id: response.request_id,
    timestamp: response.timestamp,
    valid_until: response.conditions.valid_until,
    ...reusableScopeOf(response.conditions),
  };
}

/** The exact bytes that are signed: UTF-8 of the JCS canonical payload. */
export function signingPayloadBytes(payload: ConsentSigningPayloadV02): Uint8Array {
  return new TextEncoder().encode(canonicalJson(payload));
}

/** `signed_payload_hash`: `sha256:` + hex SHA-256 of the payload bytes. */
export function signedPayloadHash(payloadBytes: Uint8Array): string {
  return sha256Ref(payloadBytes);
}
