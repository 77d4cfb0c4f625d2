import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { verifyAuditChain, type AuditVerification, type VerifyAuditOptions } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";

/** Options of {@link readPostgresAuditLines}. */
export interface ReadAuditLinesOptions {
  /** Start after this line number (default 0: from the first line). */
  readonly afterSeq?: number;
  /** Lines fetched per query (default 1000). */
  readonly pageSize?: number;
}

/**
 * The chain's lines in order, exactly as `audit.jsonl` would hold them (no newline), fetched page by
 * page (keyset on `seq`), so a long chain is never held in memory at once.
 */
export async function* readPostgresAuditLines(
  store: PostgresStore,
  options: ReadAuditLinesOptions = {},
): AsyncGenerator<string> {
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 1000));
  let after = Math.max(0, Math.floor(options.afterSeq ?? 0));
  for (;;) {
    const page = await store.query<{ seq: number; line: string }>(
      "SELECT seq, line FROM acp_audit_events WHERE seq > $1 ORDER BY seq LIMIT $2",
      [after, pageSize],
    );
    for (const row of page.rows) yield row.line;
    const last = page.rows[page.rows.length - 1];
    if (last === undefined || page.rows.length < pageSize) return;
    after = last.seq;
  }
}

/**
 * Writes the chain to `path` as JSONL (one line per event, each ending in a newline; mode 0600), the
 * format `acp audit verify` and {@link verifyAuditChain} read. Returns how many lines were written.
 */
export async function exportPostgresAuditJsonl(store: PostgresStore, path: string): Promise<number> {
  const out = createWriteStream(path, { mode: 0o600, flags: "w" });
  const state: { failure: Error | null } = { failure: null };
  out.on("error", (err) => (state.failure ??= err));
  const closed = once(out, "close").catch(() => undefined);
  let count = 0;
  try {
    for await (const line of readPostgresAuditLines(store)) {
      if (state.failure !== null) break;
      if (!out.write(`${line}\n`)) await Promise.race([once(out, "drain"), closed]);
      count++;
    }
  } finally {
    out.end();
    await closed;
  }
  if (state.failure !== null) throw state.failure;
  return count;
}

/** Reads the whole chain and verifies it with {@link verifyAuditChain} (holds the lines in memory). */
export async function verifyPostgresAuditChain(
  store: PostgresStore,
  options: VerifyAuditOptions = {},
): Promise<AuditVerification> {
  const lines: string[] = [];
  for await (const line of readPostgresAuditLines(store)) lines.push(line);
  return verifyAuditChain(lines, options);
}
