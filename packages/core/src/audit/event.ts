import { hash as oneShotHash, createHash } from "node:crypto";
import { canonicalJson, SHA256_PREFIX, sha256Ref } from "../canonical-json/index.js";
import type { JsonValue } from "../canonical-json/index.js";
import type { AuditEventType } from "./event-types.js";
import { auditBodyParts, canonicalAuditBody } from "./audit-json.js";

/** The `type` of every audit line (§7.4). */
export const AUDIT_EVENT_KIND = "audit_event";

/** The `version` ACP writes (§7.4). */
export const AUDIT_EVENT_VERSION = "0.2.0";

/** Free-form, JSON-only details of an event; redacted before it is hashed or written. */
export type AuditMetadata = { readonly [key: string]: JsonValue };

/**
 * One line of `audit.jsonl`, exactly the §7.4 schema. Every field is present; a field that does not
 * apply to an event (a checkpoint has no tool) is `null`, so the hashed bytes never depend on
 * whether a writer chose to omit or to null a field.
 */
export interface AuditEventV02 {
  readonly type: typeof AUDIT_EVENT_KIND;
  readonly version: typeof AUDIT_EVENT_VERSION;
  /** `ae_<unique>`. */
  readonly id: string;
  /** ISO-8601, from the injected clock. */
  readonly timestamp: string;
  readonly event_type: AuditEventType;
  /** `cr_<id>` of the consent request or pipeline request the event belongs to. */
  readonly request_id: string | null;
  readonly agent: string | null;
  readonly tool: string | null;
  readonly category: string | null;
  readonly risk_level: string | null;
  /** The route or the human's answer (`accept`, `ask`, `approved`, …). */
  readonly decision: string | null;
  readonly response_time_ms: number | null;
  /** The rule that decided, when one did. */
  readonly policy_rule: string | null;
  readonly metadata: AuditMetadata;
  /** `event_hash` of the line before; `null` on the first line. */
  readonly previous_event_hash: string | null;
  /** `sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of this event without `event_hash`. */
  readonly event_hash: string;
}

/** An event before it is chained: everything {@link computeEventHash} covers. */
export type AuditEventBody = Omit<AuditEventV02, "event_hash">;

/** What a caller hands the audit writer: the event type and whatever of the §7.4 fields apply. */
export interface AuditEventInput {
  readonly event_type: AuditEventType;
  readonly request_id?: string | null;
  readonly agent?: string | null;
  readonly tool?: string | null;
  readonly category?: string | null;
  readonly risk_level?: string | null;
  readonly decision?: string | null;
  readonly response_time_ms?: number | null;
  readonly policy_rule?: string | null;
  readonly metadata?: AuditMetadata;
}

/** Where an event sits in the chain; the writer supplies it. */
export interface AuditEventPlacement {
  readonly id: string;
  readonly timestamp: string;
  readonly previousEventHash: string | null;
}

/** Assembles the §7.4 body (all fields, nulls for what does not apply) from an input and its placement. */
export function createAuditEventBody(input: AuditEventInput, placement: AuditEventPlacement): AuditEventBody {
  return {
    type: AUDIT_EVENT_KIND,
    version: AUDIT_EVENT_VERSION,
    id: placement.id,
    timestamp: placement.timestamp,
    event_type: input.event_type,
    request_id: input.request_id ?? null,
    agent: input.agent ?? null,
    tool: input.tool ?? null,
    category: input.category ?? null,
    risk_level: input.risk_level ?? null,
    decision: input.decision ?? null,
    response_time_ms: input.response_time_ms ?? null,
    policy_rule: input.policy_rule ?? null,
    metadata: input.metadata ?? {},
    previous_event_hash: placement.previousEventHash,
  };
}

/** The full event an input, its placement and its (already computed) hash make: {@link createAuditEventBody} and `event_hash`. */
export function createAuditEvent(
  input: AuditEventInput,
  placement: AuditEventPlacement,
  eventHash: string,
): AuditEventV02 {
  return {
    type: AUDIT_EVENT_KIND,
    version: AUDIT_EVENT_VERSION,
    id: placement.id,
    timestamp: placement.timestamp,
    event_type: input.event_type,
    request_id: input.request_id ?? null,
    agent: input.agent ?? null,
    tool: input.tool ?? null,
    category: input.category ?? null,
    risk_level: input.risk_level ?? null,
    decision: input.decision ?? null,
    response_time_ms: input.response_time_ms ?? null,
    policy_rule: input.policy_rule ?? null,
    metadata: input.metadata ?? {},
    previous_event_hash: placement.previousEventHash,
    event_hash: eventHash,
  };
}

/**
 * `sha256:` + lowercase hex SHA-256 of the RFC 8785 canonical JSON of the event without `event_hash`.
 * Accepts a full event (its `event_hash` is ignored) or a body. Throws on values that are not JSON.
 */
export function computeEventHash(event: AuditEventBody | AuditEventV02): string {
  const body: { -readonly [K in keyof AuditEventV02]?: AuditEventV02[K] } = { ...event };
  delete body.event_hash;
  return sha256Ref(canonicalJson(body));
}

/** Chains a body: adds its `event_hash`. */
export function sealAuditEvent(body: AuditEventBody): AuditEventV02 {
  return { ...body, event_hash: computeEventHash(body) };
}

/** A sealed event and the exact line that is written for it. */
export interface SealedAuditLine {
  readonly event: AuditEventV02;
  /** RFC 8785 canonical JSON of the full event, without the trailing newline. */
  readonly line: string;
}

/** `sha256:` + hex SHA-256 of a string's UTF-8 bytes: the one-shot `crypto.hash` where Node has it. */
const sha256OfText: (text: string) => string =
  typeof oneShotHash === "function"
    ? (text) => SHA256_PREFIX + oneShotHash("sha256", text, "hex")
    : (text) => SHA256_PREFIX + createHash("sha256").update(text).digest("hex");

/**
 * Seals a body and serializes it in one canonicalization (the writer's hot path): the §7.4 keys are
 * written in their fixed sorted order with `event_hash` between `decision` and `event_type`, where
 * JCS puts it. A property test holds this equal to {@link serializeAuditEvent} of {@link sealAuditEvent}.
 */
export function sealAuditLine(body: AuditEventBody): SealedAuditLine {
  const parts = canonicalAuditBody(body);
  if (parts === undefined) {
    const event = sealAuditEvent(body);
    return { event, line: serializeAuditEvent(event) };
  }
  const eventHash = sha256OfText(parts.head + parts.tail);
  return { event: { ...body, event_hash: eventHash }, line: `${parts.head},"event_hash":"${eventHash}"${parts.tail}` };
}

/**
 * {@link createAuditEventBody} and {@link sealAuditLine} in one step, the writer's hot path: one object
 * (the event), one canonicalization, one hash. Equal to `sealAuditLine(createAuditEventBody(…))`.
 */
export function sealAuditInput(input: AuditEventInput, placement: AuditEventPlacement): SealedAuditLine {
  const event = createAuditEventBody(input, placement) as AuditEventBody & { event_hash: string };
  const parts = auditBodyParts(event);
  event.event_hash = sha256OfText(parts.head + parts.tail);
  return { event, line: `${parts.head},"event_hash":"${event.event_hash}"${parts.tail}` };
}

/** Builds a complete, hashed event from an input and its placement (the input should be redacted already). */
export function buildAuditEvent(input: AuditEventInput, placement: AuditEventPlacement): AuditEventV02 {
  return sealAuditEvent(createAuditEventBody(input, placement));
}

/** The line written for an event: its RFC 8785 canonical JSON (no trailing newline). */
export function serializeAuditEvent(event: AuditEventV02): string {
  return canonicalJson(event);
}
