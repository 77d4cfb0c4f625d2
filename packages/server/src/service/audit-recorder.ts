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

/** Whether a value is already plain JSON without a copy: a string, finite number, boolean, null, or an array of those. */
function isFlatJson(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  return Array.isArray(value) && value.every((v) => v === null || typeof v === "string" || typeof v === "boolean");
}

/** The metadata as plain JSON: copied through JSON only when a value is not flat already (the usual decision event is). */
function plainMetadata(metadata: Record<string, unknown>): AuditMetadata {
  for (const key in metadata) {
    if (!isFlatJson(metadata[key])) return JSON.parse(JSON.stringify(metadata)) as AuditMetadata;
  }
  return metadata as AuditMetadata;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
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

function ignore(): void {
  // the appended event itself is not needed
}

/** The proxy's `AuditSink` on an appender: §7.4 fields at the top, everything else under `metadata`. */
export function createAuditSink(appender: AuditAppender): AuditSink {
  return {
    // not async: a decision pays for one promise (the append's), and every failure is a rejection
    record(eventType, fields) {
      try {
        return appender.append(toInput(eventType, fields)).then(ignore);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}
