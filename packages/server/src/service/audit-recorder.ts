/** Turns the broker's and the service's audit records into events of the hash-chained log. */
import { isAuditEventType, type AuditEventInput, type AuditMetadata } from "@acp/core";
import type { AuditSink } from "@acp/proxy";

/** Where the service appends audit events (the JSONL writer of `@acp/store`, or PostgreSQL later). */
export interface AuditAppender {
  append(input: AuditEventInput): Promise<unknown>;
}

const TOP_LEVEL = ["request_id", "agent", "tool", "category", "risk_level", "decision", "policy_rule"] as const;

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** The proxy's `AuditSink` on an appender: §7.4 fields at the top, everything else under `metadata`. */
export function createAuditSink(appender: AuditAppender): AuditSink {
  return {
    async record(eventType, fields) {
      if (!isAuditEventType(eventType)) throw new Error(`unknown audit event type \`${eventType}\``);
      const metadata: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fields)) {
        if (!(TOP_LEVEL as readonly string[]).includes(key) && key !== "metadata") metadata[key] = value;
      }
      const extra = fields["metadata"];
      if (typeof extra === "object" && extra !== null) Object.assign(metadata, extra);
      const input: AuditEventInput = {
        event_type: eventType,
        request_id: stringOrNull(fields["request_id"]),
        agent: stringOrNull(fields["agent"]),
        tool: stringOrNull(fields["tool"]),
        category: stringOrNull(fields["category"]),
        risk_level: stringOrNull(fields["risk_level"]),
        decision: stringOrNull(fields["decision"]),
        policy_rule: stringOrNull(fields["policy_rule"]),
        metadata: JSON.parse(JSON.stringify(metadata)) as AuditMetadata,
      };
      await appender.append(input);
    },
  };
}
