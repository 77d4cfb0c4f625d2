/** Turns the broker's and the service's audit records into events of the hash-chained log. */
import { auditEventInput, type AuditEventInput } from "@acp/core";
import type { AuditSink } from "@acp/proxy";

/** Where the service appends audit events (the JSONL writer of `@acp/store`, or PostgreSQL later). */
export interface AuditAppender {
  append(input: AuditEventInput): Promise<unknown>;
}

/**
 * The proxy's `AuditSink` on an appender: §7.4 fields at the top, everything else under `metadata`, always
 * recordable (`auditEventInput`, the one `acp proxy` uses: a lone surrogate a caller sent becomes U+FFFD,
 * nesting deeper than the chain takes is cut), so no request can make the chain refuse to record.
 */
export function createAuditSink(appender: AuditAppender): AuditSink {
  return {
    // not async, and the append's own promise (no `.then` per event): callers only wait on it, and the
    // service tells a group's promise (shared by its events) from the next one by identity
    record(eventType, fields) {
      try {
        return appender.append(auditEventInput(eventType, fields)) as Promise<void>;
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}
