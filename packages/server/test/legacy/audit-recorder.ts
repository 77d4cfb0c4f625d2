// The service's audit recorder as it was before 26 Nov 2026 (commit 37746fa), kept only for
// audit-recorder.test.ts, which holds the current one to the same events. Not used by ACP.
/** Turns the broker's and the service's audit records into events of the hash-chained log. */
import { isAuditEventType, type AuditEventInput, type AuditMetadata } from "@acp/core";
import type { AuditSink } from "@acp/proxy";

/** Where the service appends audit events (the JSONL writer of `@acp/store`, or PostgreSQL later). */
export interface AuditAppender {
  append(input: AuditEventInput): Promise<unknown>;
}

const TOP_LEVEL: ReadonlySet<string> = new Set([
  "request_id",
  "agent",
  "tool",
  "category",
  "risk_level",
  "decision",
  "policy_rule",
]);

/** ES2024 string methods (Node >= 20 has them; the build's lib is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

function isWellFormed(value: string): boolean {
  return (value as unknown as WellFormedString).isWellFormed();
}

/** A string as I-JSON can hold it: a lone surrogate (valid in JSON text, refused by the chain's canonical form) becomes U+FFFD. */
function wellFormed(value: string): string {
  return isWellFormed(value) ? value : (value as unknown as WellFormedString).toWellFormed();
}

/** Whether a value is already plain, well-formed JSON without a copy: a string, finite number, boolean, null, or an array of those. */
function isFlatJson(value: unknown): boolean {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "string") return isWellFormed(value);
  if (typeof value === "number") return Number.isFinite(value);
  return (
    Array.isArray(value) &&
    value.every((v) => v === null || typeof v === "boolean" || (typeof v === "string" && isWellFormed(v)))
  );
}

/** Every string of a JSON copy (keys too) well-formed. */
function wellFormedDeep(value: unknown): unknown {
  if (typeof value === "string") return wellFormed(value);
  if (Array.isArray(value)) return value.map(wellFormedDeep);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[wellFormed(key)] = wellFormedDeep(child);
  return out;
}

/**
 * The metadata as plain JSON the chain accepts: copied through JSON (and lone surrogates replaced) only
 * when a value is not flat and well-formed already (the usual decision event is).
 */
function plainMetadata(metadata: Record<string, unknown>): AuditMetadata {
  for (const key in metadata) {
    if (!isFlatJson(metadata[key]) || !isWellFormed(key)) {
      return wellFormedDeep(JSON.parse(JSON.stringify(metadata))) as AuditMetadata;
    }
  }
  return metadata as AuditMetadata;
}

/**
 * A field as the event's string (or null). Tool and agent names come from the caller, and a lone
 * surrogate in one would make the event unrecordable (and stop every later decision): it is recorded
 * as U+FFFD instead.
 */
function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? wellFormed(value) : null;
}

function toInput(eventType: string, fields: Record<string, unknown>): AuditEventInput {
  if (!isAuditEventType(eventType)) throw new Error(`unknown audit event type \`${eventType}\``);
  const metadata: Record<string, unknown> = {};
  for (const key in fields) {
    if (TOP_LEVEL.has(key) || key === "metadata" || !Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    if (value !== undefined) metadata[key] = value;
  }
  const extra = fields["metadata"];
  if (typeof extra === "object" && extra !== null) Object.assign(metadata, extra);
  return {
    event_type: eventType,
    request_id: stringOrNull(fields["request_id"]),
    agent: stringOrNull(fields["agent"]),
    tool: stringOrNull(fields["tool"]),
    category: stringOrNull(fields["category"]),
    risk_level: stringOrNull(fields["risk_level"]),
    decision: stringOrNull(fields["decision"]),
    policy_rule: stringOrNull(fields["policy_rule"]),
    metadata: plainMetadata(metadata),
  };
}

/** The proxy's `AuditSink` on an appender: §7.4 fields at the top, everything else under `metadata`. */
export function createAuditSink(appender: AuditAppender): AuditSink {
  return {
    // not async, and the append's own promise (no `.then` per event): callers only wait on it, and the
    // service tells a group's promise (shared by its events) from the next one by identity
    record(eventType, fields) {
      try {
        return appender.append(toInput(eventType, fields)) as Promise<void>;
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}
