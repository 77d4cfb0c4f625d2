/** The audit chain as the service reads it from PostgreSQL (`acp_audit_events`, one row per line). */
import { parseAuditLine, type CheckpointPublicKey } from "@acp/core";
import { verifyPostgresAuditChain, type PostgresStore } from "@acp/store";
import type { AuditEntry, AuditPage, AuditQuery, AuditTrail } from "../types.js";

/** Options of {@link createPostgresAuditTrail}. */
export interface PostgresAuditTrailOptions {
  /** Checkpoint signatures are checked with this key when given. */
  readonly publicKey?: CheckpointPublicKey;
}

/** The WHERE clause and its values for a query (every filter a bound parameter). */
function whereOf(query: AuditQuery): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const parts: string[] = [];
  const add = (sql: (n: string) => string, value: unknown): void => {
    values.push(value);
    parts.push(sql(`$${values.length}`));
  };
  if (query.before !== undefined) add((n) => `seq < ${n}`, query.before);
  if (query.eventType !== undefined) add((n) => `event_type = ${n}`, query.eventType);
  if (query.requestId !== undefined) add((n) => `request_id = ${n}`, query.requestId);
  if (query.tool !== undefined) add((n) => `(line::jsonb ->> 'tool') = ${n}`, query.tool);
  if (query.agent !== undefined) add((n) => `(line::jsonb ->> 'agent') = ${n}`, query.agent);
  if (query.decision !== undefined) add((n) => `(line::jsonb ->> 'decision') = ${n}`, query.decision);
  if (query.q !== undefined && query.q !== "") add((n) => `strpos(lower(line), lower(${n})) > 0`, query.q);
  return { sql: parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`, values };
}

/** Lists pages (newest first, `line` = the row's `seq`) and verifies the one chain all nodes append to. */
export function createPostgresAuditTrail(store: PostgresStore, options: PostgresAuditTrailOptions = {}): AuditTrail {
  return {
    async list(query): Promise<AuditPage> {
      const where = whereOf(query);
      const limit = Math.max(1, query.limit);
      const [page, total] = await Promise.all([
        store.query<{ seq: number; line: string }>(
          `SELECT seq, line FROM acp_audit_events ${where.sql} ORDER BY seq DESC LIMIT ${limit + 1}`,
          where.values,
        ),
        store.query<{ n: number }>("SELECT COALESCE(MAX(seq), 0)::bigint AS n FROM acp_audit_events"),
      ]);
      const events: AuditEntry[] = [];
      for (const row of page.rows.slice(0, limit)) {
        const parsed = parseAuditLine(row.line);
        if (parsed.ok) events.push({ line: row.seq, event: parsed.value });
      }
      const last = events.at(-1);
      const next = page.rows.length > limit && last !== undefined ? last.line : null;
      return { events, total: total.rows[0]?.n ?? 0, next };
    },
    verify: () =>
      verifyPostgresAuditChain(store, options.publicKey !== undefined ? { publicKey: options.publicKey } : {}),
  };
}
