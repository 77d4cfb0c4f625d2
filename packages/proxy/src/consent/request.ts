import type { Decision, Redactor } from "@acp/core";
import { createConsentRedactor } from "./redact.js";
import type { ConsentRequestV02 } from "./types.js";

/** What the broker knows when it opens a request. */
export interface ConsentRequestSource {
  readonly server: string;
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly decision: Decision;
  readonly agent?: string;
  readonly timeoutMs: number;
}

/** The agent fields of §4.1 the proxy knows about the process it serves. */
export interface ConsentAgentInfo {
  readonly id: string;
  readonly name: string;
  readonly command: string;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

/** `cr_` and 32 lowercase hex digits of fresh randomness. */
export function createConsentRequestId(random: (size: number) => Uint8Array): string {
  return `cr_${hex(random(16))}`;
}

/** `n_` and a lowercase RFC 4122 v4 UUID made from fresh randomness. */
export function createConsentNonce(random: (size: number) => Uint8Array): string {
  const b = Buffer.from(random(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `n_${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function describe(source: ConsentRequestSource): string {
  const first = source.decision.reasons[0];
  const base = `call \`${source.tool}\` on \`${source.server}\``;
  return first === undefined ? base : `${base}: ${first.message}`;
}

const DEFAULT_REDACT = createConsentRedactor();

/** What a §4.1 `agent` field says when nothing better is known. */
const UNKNOWN = "unknown";
/** Longest `agent` field the §4.1 schema takes (`spec/schemas/consent-request.schema.json`). */
const MAX_AGENT_FIELD = 4096;

/** A non-empty agent field, cut to the schema's length; undefined when there is nothing to say. */
function known(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  return value.length > MAX_AGENT_FIELD ? value.slice(0, MAX_AGENT_FIELD) : value;
}

/**
 * Builds the §4.1 consent request for one ask: fresh id and nonce, parameters redacted by `deps.redact`
 * (default: the default rules with the `[redacted]` placeholder).
 */
export function buildConsentRequest(
  source: ConsentRequestSource,
  deps: {
    readonly now: Date;
    readonly random: (size: number) => Uint8Array;
    readonly agent?: ConsentAgentInfo;
    readonly redact?: Redactor;
  },
): ConsentRequestV02 {
  // §4.1 `agent` fields are non-empty strings: a client that names itself `""`, or a proxy that does not
  // know the agent's command, says `unknown` rather than emit a request its own schema refuses
  const agentId = known(source.agent) ?? known(deps.agent?.id) ?? UNKNOWN;
  const rule = source.decision.rule;
  return {
    type: "consent_request",
    version: "0.2.0",
    id: createConsentRequestId(deps.random),
    timestamp: deps.now.toISOString(),
    expires_at: new Date(deps.now.getTime() + source.timeoutMs).toISOString(),
    agent: {
      id: agentId,
      name: known(deps.agent?.name) ?? agentId,
      command: known(deps.agent?.command) ?? UNKNOWN,
    },
    action: {
      tool: source.tool,
      server: source.server,
      category: source.decision.category,
      risk_level: source.decision.risk_level,
      parameters: (deps.redact ?? DEFAULT_REDACT)(source.arguments) as Record<string, unknown>,
      description: describe(source),
    },
    policy: {
      rule_id: rule ?? "default",
      rule_name: rule === null ? "default_action" : rule.slice(rule.indexOf(":") + 1),
      required_level: source.decision.level ?? source.decision.risk_level,
    },
    nonce: createConsentNonce(deps.random),
  };
}
