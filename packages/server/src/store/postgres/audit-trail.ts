/** The audit chain as the service reads it from PostgreSQL (`acp_audit_events`, one row per line). */
import { parseAuditLine, type CheckpointPublicKey } from "@acp/core";
import { MAX_AUDIT_PAGE_BYTES, MAX_AUDIT_ROW_BYTES, type PostgresStore } from "@acp/store";
import { continuedVerification, type ContinuedVerificationOptions } from "../continued-verification.js";
import type { AuditEntry, AuditPage, AuditQuery, AuditTrail } from "../types.js";
import { tableChain } from "./table-chain.js";

/** Options of {@link createPostgresAuditTrail}. */
export interface PostgresAuditTrailOptions extends ContinuedVerificationOptions {
  /** Checkpoint signatures are checked with this key when given. */
  readonly publicKey?: CheckpointPublicKey;
  /**
   * The node's anchor on the chain (`audit-postgres-<id>.checkpoint` in its home, `PostgresAuditAnchor.path`):
   * the chain is verified against it, read again at each verification, and fails `anchor_missing` when it is
   * gone while its marker is there, as `acp audit verify --storage-url` does in that home. Absent (a node
   * that keeps no anchor: no home or no signer), the chain's own rows only.
   */
  readonly anchorPath?: string;
  /** The line the running node holds the chain to (`PostgresAuditAnchor.heldLine`), newer than the file or without it. */
  readonly heldLine?: () => string | null;
}

/**
 * A line as `jsonb`. PostgreSQL's `jsonb` refuses the escape `\u0000` (text cannot hold NUL), and one such
 * line — an agent can send a tool name with a NUL; the chain records it escaped — made every filtered
 * query fail. The escape is read as U+FFFD instead (a filter value's NUL too, see {@link field}).
 */
const LINE_JSONB = String.raw`replace(line, '\u0000', '\ufffd')::jsonb`;

/** A filter value compared with a field of {@link LINE_JSONB}: NUL read as U+FFFD, as in the line. */
function field(value: string): string {
  return value.replaceAll("\u0000", "\ufffd");
}

/** Whether a value can be a bound parameter (PostgreSQL text holds no NUL). */
function storable(value: string | undefined): boolean {
  return value === undefined || !value.includes("\u0000");
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
  if (query.tool !== undefined) add((n) => `(${LINE_JSONB} ->> 'tool') = ${n}`, field(query.tool));
  if (query.agent !== undefined) add((n) => `(${LINE_JSONB} ->> 'agent') = ${n}`, field(query.agent));
  if (query.decision !== undefined) add((n) => `(${LINE_JSONB} ->> 'decision') = ${n}`, field(query.decision));
  if (query.q !== undefined && query.q !== "") add((n) => `strpos(lower(line), lower(${n})) > 0`, query.q);
  return { sql: parts.length === 0 ? "" : `WHERE ${parts.join(" AND ")}`, values };
}

/**
 * The listing's query: the newest `limit` rows matching `where` (its values `$1`…`$filters`), a line longer
 * than `$filters+1` bytes given as NULL (its length is read, not the line: whoever can write the database
 * can make a row hundreds of megabytes long), the page cut where its lines pass `$filters+2` bytes (never
 * before its first row); `n`: how many rows the query found before the cut.
 */
function listSql(where: string, filters: number, limit: number): string {
  const row = `$${filters + 1}`;
  const pageBytes = `$${filters + 2}`;
  return `SELECT seq, CASE WHEN bytes > ${row} THEN NULL ELSE COALESCE(line, '') END AS line, n
  FROM (SELECT seq, line, bytes, count(*) OVER () AS n,
               sum(LEAST(bytes, ${row} + 1)) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING)
                 - LEAST(bytes, ${row} + 1) AS before
          FROM (SELECT seq, line, octet_length(line) AS bytes
                  FROM acp_audit_events ${where} ORDER BY seq DESC LIMIT ${limit}) page) sized
 WHERE before < ${pageBytes}
 ORDER BY seq DESC`;
}

/** Lists pages (newest first, `line` = the row's `seq`) and verifies the one chain all nodes append to. */
export function createPostgresAuditTrail(
  store: PostgresStore,
  options: PostgresAuditTrailOptions = {},
): AuditTrail & { readonly idle: () => Promise<void> } {
  const { publicKey, anchorPath, heldLine, ...continued } = options;
  // callers that arrive while a verification runs share it; each reads only the rows appended since the last
  const chain = { publicKey, anchorPath, ...(heldLine !== undefined ? { heldLine } : {}) };
  const verification = continuedVerification(tableChain(store, chain), continued);
  return {
    async list(query): Promise<AuditPage> {
      const limit = Math.max(1, query.limit);
      const total = async (): Promise<number> =>
        (await store.query<{ n: number }>("SELECT COALESCE(MAX(seq), 0)::bigint AS n FROM acp_audit_events")).rows[0]
          ?.n ?? 0;
      // an event type or request id with a NUL names no row (columns of plain text), nor is a NUL in the
      // text of any line (it is written as its JSON escape): as in the file's search, no match
      if (!storable(query.eventType) || !storable(query.requestId) || !storable(query.q))
        return { events: [], total: await total(), next: null };
      const where = whereOf(query);
      const [page, count] = await Promise.all([
        store.query<{ seq: number; line: string | null; n: number | string }>(
          listSql(where.sql, where.values.length, limit + 1),
          [...where.values, MAX_AUDIT_ROW_BYTES, MAX_AUDIT_PAGE_BYTES],
        ),
        total(),
      ]);
      const shown = page.rows.slice(0, limit);
      const events: AuditEntry[] = [];
      for (const row of shown) {
        // a row too long for any audit line (NULL here) is not listed, as a line that does not parse is not:
        // the chain's verification, shown beside the listing, names it (`not_json`, line too long)
        const parsed = row.line === null ? null : parseAuditLine(row.line);
        if (parsed?.ok === true) events.push({ line: row.seq, event: parsed.value });
      }
      // more rows follow when the query found more than the page holds or the page was cut at its bytes
      const found = Number(page.rows[0]?.n ?? 0);
      const last = shown.at(-1);
      const next = found > shown.length && last !== undefined ? last.seq : null;
      return { events, total: count, next };
    },
    verify: verification.verify,
    idle: verification.idle,
  };
}
