import { closeSync, openSync, writevSync } from "node:fs";
import { AuditLineStager, createStagedAuditLines, sealStagedLine, type AuditEventInput } from "@acp/core";

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
 * `keep` lines (all by default) and the head. Made the way the writer makes lines (staged and sealed in
 * place: a few µs per event), so a test can write 200,000 quickly.
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
  const stager = new AuditLineStager();
  let staged = createStagedAuditLines();
  const flush = (): void => {
    const count = staged.buffers.length;
    const views: Buffer[] = [];
    for (let k = 0; k < count; k++) {
      head = sealStagedLine(staged, k, head);
      const start = staged.offsets[4 * k] as number;
      const end = staged.offsets[4 * k + 3] as number;
      const bytes = (staged.buffers[k] as Buffer).subarray(start, end);
      if (lines.length < keep) lines.push(bytes.toString("utf8", 0, bytes.length - 1));
      views.push(bytes);
    }
    if (views.length > 0) writevSync(fd, views);
    staged = createStagedAuditLines();
  };
  try {
    for (let i = from; i < from + n; i++) {
      stager.stage(inputOf(i, pad), `ae_${i}`, new Date(Date.UTC(2026, 0, 15) + i).toISOString(), staged);
      if (staged.buffers.length === 1024) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { lines, head };
}
