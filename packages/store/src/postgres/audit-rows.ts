import { MAX_AUDIT_LINE_LENGTH } from "@acp/core";

/** Runs one read: on the store (autocommit) or on a transaction's connection. */
export type AuditRowQuery = (text: string, values: unknown[]) => Promise<{ readonly rows: readonly unknown[] }>;

/** A row of the chain: its `seq` and its line. */
export interface PostgresAuditRow {
  readonly seq: number;
  readonly line: string;
}

/**
 * Bytes of a row's line beyond which it is not fetched: more UTF-8 bytes than this hold more than
 * {@link MAX_AUDIT_LINE_LENGTH} UTF-16 units (a unit takes at most 3 bytes), which the verifier refuses
 * (`not_json`, line too long) whatever they say. Whoever can write the database can make a row hundreds of
 * megabytes long: fetched whole, a page of them took all the memory a verification had.
 */
export const MAX_AUDIT_ROW_BYTES = 3 * MAX_AUDIT_LINE_LENGTH;

/** Bytes of lines one page holds at most (but always its first row): a few thousand ordinary rows. */
export const MAX_AUDIT_PAGE_BYTES = 8 * 1024 * 1024;

let overlong: string | undefined;

/**
 * What a row longer than {@link MAX_AUDIT_ROW_BYTES} is given as: longer than any line the verifier reads, so
 * it is refused as the row would be (`line longer than 1048576 characters`), and equal to no real line.
 */
export function overlongAuditRow(): string {
  return (overlong ??= "x".repeat(MAX_AUDIT_LINE_LENGTH + 1));
}

/**
 * The page query: the rows after `$1`, at most `$2` of them, cut where their lines pass `$4` bytes (but never
 * before the first row), a line longer than `$3` bytes given as NULL (its length is read, not the line), a NULL
 * line (the column's NOT NULL dropped) as the empty line the verifier refuses as not JSON; `n`: how many rows the
 * page had before the cut.
 */
const PAGE_SQL = `SELECT seq, CASE WHEN bytes > $3 THEN NULL ELSE COALESCE(line, '') END AS line, n
  FROM (SELECT seq, line, bytes, count(*) OVER () AS n,
               sum(LEAST(bytes, $3 + 1)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - LEAST(bytes, $3 + 1) AS before
          FROM (SELECT seq, line, octet_length(line) AS bytes
                  FROM acp_audit_events WHERE seq > $1 ORDER BY seq LIMIT $2) page) sized
 WHERE before < $4
 ORDER BY seq`;

/** A page of the chain, and whether rows may follow it (read on from its last row). */
export interface PostgresAuditPage {
  readonly rows: PostgresAuditRow[];
  readonly more: boolean;
}

/**
 * Reads the rows after `after` in order of `seq`: at most `pageSize`, and no more than
 * {@link MAX_AUDIT_PAGE_BYTES} of lines (at least one row), a row longer than {@link MAX_AUDIT_ROW_BYTES}
 * as {@link overlongAuditRow}. Every reader of the chain pages this way.
 */
export async function readPostgresAuditPage(
  query: AuditRowQuery,
  after: number,
  pageSize: number,
): Promise<PostgresAuditPage> {
  const { rows } = await query(PAGE_SQL, [after, pageSize, MAX_AUDIT_ROW_BYTES, MAX_AUDIT_PAGE_BYTES]);
  const read = rows as readonly { seq: number; line: string | null; n: number | string }[];
  const fetched = Number(read[0]?.n ?? 0);
  return {
    rows: read.map((r) => ({ seq: r.seq, line: r.line ?? overlongAuditRow() })),
    more: read.length < fetched || fetched === pageSize,
  };
}

/** The row at `seq` (its line as {@link readPostgresAuditPage} gives it), or `undefined` when there is none. */
export async function readPostgresAuditRow(query: AuditRowQuery, seq: number): Promise<PostgresAuditRow | undefined> {
  const { rows } = await query(
    "SELECT seq, CASE WHEN octet_length(line) > $2 THEN NULL ELSE COALESCE(line, '') END AS line FROM acp_audit_events WHERE seq = $1",
    [seq, MAX_AUDIT_ROW_BYTES],
  );
  const row = rows[0] as { seq: number; line: string | null } | undefined;
  return row === undefined ? undefined : { seq: row.seq, line: row.line ?? overlongAuditRow() };
}
