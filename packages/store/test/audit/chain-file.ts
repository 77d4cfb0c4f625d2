import { closeSync, openSync, writeSync } from "node:fs";
import { createAuditEventBody, sealAuditLine, type AuditEventInput } from "@acp/core";

/** An event of about 600 bytes. */
function inputOf(i: number, pad: string): AuditEventInput {
  return {
    event_type: i % 2 === 0 ? "tool_call_intercepted" : "policy_evaluated",
    request_id: `cr_${i >> 1}`,
    agent: "claude",
    tool: "send_email",
    decision: i % 2 === 0 ? null : "accept",
    metadata: { parameters: { to: "a@example.com", n: i, body: pad } },
  };
}

/**
 * Writes a valid chain of `n` events to `path` (no checkpoints), 4096 lines per write; returns the first
 * `keep` lines (all by default) and the head.
 */
export function writeChain(
  path: string,
  n: number,
  options: { keep?: number; padding?: number; append?: { head: string | null; from: number } } = {},
): { lines: string[]; head: string | null } {
  const pad = "x".repeat(options.padding ?? 200);
  const keep = options.keep ?? n;
  const fd = openSync(path, options.append === undefined ? "w" : "a", 0o600);
  const lines: string[] = [];
  let head = options.append?.head ?? null;
  const from = options.append?.from ?? 0;
  let batch: string[] = [];
  try {
    for (let i = from; i < from + n; i++) {
      const body = createAuditEventBody(inputOf(i, pad), {
        id: `ae_${i}`,
        timestamp: new Date(Date.UTC(2026, 0, 15) + i).toISOString(),
        previousEventHash: head,
      });
      const sealed = sealAuditLine(body);
      head = sealed.event.event_hash;
      if (lines.length < keep) lines.push(sealed.line);
      batch.push(sealed.line);
      if (batch.length === 4096) {
        writeSync(fd, `${batch.join("\n")}\n`);
        batch = [];
      }
    }
    if (batch.length > 0) writeSync(fd, `${batch.join("\n")}\n`);
  } finally {
    closeSync(fd);
  }
  return { lines, head };
}
