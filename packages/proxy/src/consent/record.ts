import { actionHash, type ApprovedAction } from "@acp/core";
import type { BrokerAsk, ConsentAuditSink } from "./broker-types.js";
import type { ConsentRequestV02 } from "./types.js";

/**
 * `metadata.consent_action`: the `{server, tool, parameters}` a consent response's `action_hash` is computed
 * over (the request's server and tool, the arguments as approved), so the response can be verified from the
 * event with the public key alone. The audit writer withholds it (`null`) when its redaction would change it.
 */
export function consentActionOf(
  request: ConsentRequestV02,
  parameters: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return actionOf(request.action.server, request.action.tool, parameters);
}

function actionOf(
  server: string,
  tool: string,
  parameters: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  // as the signer hashed it: plain JSON (an `undefined` member dropped)
  return { server, tool, parameters: JSON.parse(JSON.stringify(parameters)) as unknown };
}

/**
 * `metadata.consent_action` and `consent_action_hash` (its `action_hash`, by which `acp audit verify` still
 * checks the signature when a value of the action is cut to fit the audit line; withheld with the action).
 * The one writer of these fields for the broker, `acp serve`'s completions and the proxy's gate.
 */
export function consentActionFields(
  request: ConsentRequestV02,
  parameters: Readonly<Record<string, unknown>>,
): { consent_action: Record<string, unknown>; consent_action_hash?: string } {
  return consentActionFieldsOf(request.action.server, request.action.tool, parameters);
}

/** {@link consentActionFields} of a call named by its server and tool. */
export function consentActionFieldsOf(
  server: string,
  tool: string,
  parameters: Readonly<Record<string, unknown>>,
): { consent_action: Record<string, unknown>; consent_action_hash?: string } {
  const action = actionOf(server, tool, parameters);
  try {
    return { consent_action: action, consent_action_hash: actionHash(action as unknown as ApprovedAction) };
  } catch {
    return { consent_action: action }; // not canonical JSON: nothing was signed over it either
  }
}

/** Writes the broker's consent events; `event` resolves false when the audit write failed. */
export interface ConsentRecorder {
  event(
    eventType: string,
    ask: BrokerAsk,
    request: ConsentRequestV02,
    metadata: Record<string, unknown>,
  ): Promise<boolean>;
}

/**
 * The broker's audit writer. Fields follow the audit event schema (§7.4): `request_id`, `agent`, `tool`,
 * `category`, `risk_level`, `policy_rule`, plus `server` and `session_id`; the rest goes in `metadata`
 * (the whole signed response as `metadata.consent_response`). Without a sink every write succeeds.
 */
export function createConsentRecorder(sink: ConsentAuditSink | undefined): ConsentRecorder {
  return {
    async event(eventType, ask, request, metadata) {
      if (sink === undefined) return true;
      const decision =
        typeof metadata["decision"] === "string" ? metadata["decision"] : eventType.replace(/^consent_/, "");
      try {
        await sink.record(eventType, {
          request_id: request.id,
          agent: request.agent.id,
          server: ask.server,
          tool: ask.tool,
          session_id: ask.sessionId,
          category: ask.decision.category,
          risk_level: ask.decision.risk_level,
          decision,
          policy_rule: ask.decision.rule,
          metadata,
        });
        return true;
      } catch {
        return false;
      }
    },
  };
}
