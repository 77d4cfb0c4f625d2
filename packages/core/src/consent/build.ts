import type { RiskLevel } from "../request/index.js";
import type { ConsentAgentV02, ConsentPolicyRefV02, ConsentRequestV02, JsonObject } from "./types.js";
import { CONSENT_PROTOCOL_VERSION } from "./types.js";

/** The clock and randomness a builder uses; injected so tests replay the same. */
export interface ConsentDeps {
  /** The current time. */
  readonly now: () => Date;
  /** A random RFC 4122 v4 UUID (`crypto.randomUUID` fits). */
  readonly randomUUID: () => string;
}

/** What the pipeline knows when it asks a human. */
export interface ConsentRequestInput {
  readonly agent: ConsentAgentV02;
  readonly action: {
    readonly tool: string;
    readonly server: string;
    readonly category: string;
    readonly risk_level: RiskLevel;
    readonly parameters: JsonObject;
    readonly description: string;
  };
  readonly policy: ConsentPolicyRefV02;
  /** How long the human has to answer, in seconds (the policy rule's `timeout`). */
  readonly timeoutSeconds: number;
}

/** A new request id: `cr_` and 32 lowercase hex digits from a random UUID. */
export function createRequestId(deps: Pick<ConsentDeps, "randomUUID">): string {
  return `cr_${deps.randomUUID().toLowerCase().replace(/-/g, "")}`;
}

/** A new nonce: `n_` and a lowercase random UUID. */
export function createNonce(deps: Pick<ConsentDeps, "randomUUID">): string {
  return `n_${deps.randomUUID().toLowerCase()}`;
}

/** Builds a §4.1 consent request with a fresh id and nonce, timestamped by the injected clock. */
export function createConsentRequest(input: ConsentRequestInput, deps: ConsentDeps): ConsentRequestV02 {
  const now = deps.now();
  return {
    type: "consent_request",
    version: CONSENT_PROTOCOL_VERSION,
    id: createRequestId(deps),
    timestamp: now.toISOString(),
    expires_at: new Date(now.getTime() + input.timeoutSeconds * 1000).toISOString(),
    agent: { ...input.agent },
    action: { ...input.action },
    policy: { ...input.policy },
    nonce: createNonce(deps),
  };
}
