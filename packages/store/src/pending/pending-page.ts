/**
 * One page of the pending consent requests (`listPendingPage`): oldest first, after a cursor, at most `limit`
 * rows and, beyond the first, only as many as fit `maxBytes` of their stored JSON. Each store reads the ids
 * and sizes first and then only the rows that fit, so a page of huge requests (a flood of calls with
 * megabyte arguments) is never read whole into memory.
 */
import type { PendingConsentRow } from "./pending-store.js";
import type { PendingOwner } from "./owner.js";

/** Where a page starts: after the row created at `createdAtMs` with this `id` (listing order). */
export interface PendingCursor {
  readonly createdAtMs: number;
  readonly id: string;
}

/** What `listPendingPage` takes. */
export interface PendingPageQuery {
  /** Rows after this one; absent: from the oldest. */
  readonly after?: PendingCursor;
  /** At most this many rows (1 to {@link MAX_PENDING_PAGE_ROWS}). */
  readonly limit: number;
  /**
   * Beyond the first row, at most this many bytes of stored request and reasons JSON in all (SQLite counts
   * characters): the rows past it are left for the next page.
   */
  readonly maxBytes: number;
}

/** A page of pending requests. */
export interface PendingPage {
  /** Pending and unexpired, oldest first. */
  readonly rows: PendingConsentRow[];
  /**
   * The cursor after the last row this page covered (also when that row was settled, or filtered out by
   * the caller, between the two reads): the next page's `after`. Null when the page covered none.
   */
  readonly last: PendingCursor | null;
  /** True when rows after `last` were waiting at the first read: ask for the next page. */
  readonly more: boolean;
}

/** A pending request as `listPendingIds` names it: its id and (SQLite) the process waiting for it. */
export interface PendingId {
  readonly id: string;
  /** The process waiting for the answer; null when not recorded (a row of `acp serve`, a PostgreSQL store). */
  readonly owner: PendingOwner | null;
}

/** Most rows one page reads. */
export const MAX_PENDING_PAGE_ROWS = 1000;

/** The id and stored size of a row, as the first read of a page returns them. */
export interface SizedPendingRow {
  readonly id: string;
  readonly createdAtMs: number;
  readonly bytes: number;
}

/** Throws unless the page query is one a store can run (a caller's bug otherwise). */
export function assertPageQuery(query: PendingPageQuery): void {
  const { limit, maxBytes, after } = query;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PENDING_PAGE_ROWS) {
    throw new RangeError(`pending consent: a page holds 1 to ${MAX_PENDING_PAGE_ROWS} rows, not \`${String(limit)}\``);
  }
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`pending consent: a page's byte budget must be a whole number, not \`${String(maxBytes)}\``);
  }
  if (after !== undefined && (!Number.isSafeInteger(after.createdAtMs) || typeof after.id !== "string")) {
    throw new TypeError("pending consent: a page cursor is a whole number of milliseconds and an id");
  }
}

/**
 * How many of the sized rows (read in order, `limit + 1` of them at most) the page takes: up to `limit`, the
 * first always, the next while their bytes together fit `maxBytes`; and whether rows are left after them.
 */
export function fitPage(sized: readonly SizedPendingRow[], query: PendingPageQuery): { take: number; more: boolean } {
  let take = 0;
  let bytes = 0;
  for (const row of sized) {
    if (take >= query.limit) break;
    if (take > 0) {
      if (bytes + row.bytes > query.maxBytes) break;
      bytes += row.bytes;
    }
    take++;
  }
  return { take, more: sized.length > take };
}

/** The cursor of the page's last covered row, or null when it covered none. */
export function lastOf(sized: readonly SizedPendingRow[], take: number): PendingCursor | null {
  const row = take > 0 ? sized[take - 1] : undefined;
  return row === undefined ? null : { createdAtMs: row.createdAtMs, id: row.id };
}

/** The keyset start of a page: before every row when there is no cursor. */
export function pageStart(after: PendingCursor | undefined): { createdAtMs: number; id: string } {
  return after ?? { createdAtMs: Number.MIN_SAFE_INTEGER, id: "" };
}
