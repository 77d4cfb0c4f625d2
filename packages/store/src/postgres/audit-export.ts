import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { verifyAuditStream, type AuditVerification, type VerifyAuditOptions } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";
import { readPostgresAuditPage, type AuditRowQuery, type PostgresAuditRow } from "./audit-rows.js";

/** Options of {@link readPostgresAuditLines}. */
export interface ReadAuditLinesOptions {
  /** Start after this line number (default 0: from the first line). */
  readonly afterSeq?: number;
  /** Lines fetched per query (default 1000). */
  readonly pageSize?: number;
}

export type { PostgresAuditRow } from "./audit-rows.js";

/**
 * The chain's rows in order of `seq`, one page (at most `pageSize` rows, and at most 8 MiB of lines: keyset on
 * `seq`) at a time; no empty page. A row longer than any audit line (more than 3 MiB) is not fetched: it comes
 * as a stand-in of 1,048,577 `x`, which the verifier refuses as it would the row (`not_json`, line too long).
 */
export async function* readPostgresAuditPages(
  store: PostgresStore,
  options: ReadAuditLinesOptions = {},
): AsyncGenerator<PostgresAuditRow[]> {
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 1000));
  let after = Math.max(0, Math.floor(options.afterSeq ?? 0));
  const query: AuditRowQuery = (text, values) => store.query(text, values);
  for (;;) {
    const page = await readPostgresAuditPage(query, after, pageSize);
    const last = page.rows[page.rows.length - 1];
    if (last === undefined) return;
    yield page.rows;
    if (!page.more) return;
    after = last.seq;
  }
}

/**
 * The chain's rows in order of `seq`, fetched page by page (keyset on `seq`), so a long chain is never
 * held in memory at once.
 */
export async function* readPostgresAuditRows(
  store: PostgresStore,
  options: ReadAuditLinesOptions = {},
): AsyncGenerator<PostgresAuditRow> {
  for await (const page of readPostgresAuditPages(store, options)) yield* page;
}

/**
 * The chain's lines in order, exactly as `audit.jsonl` would hold them (no newline), fetched page by
 * page (keyset on `seq`), so a long chain is never held in memory at once.
 */
export async function* readPostgresAuditLines(
  store: PostgresStore,
  options: ReadAuditLinesOptions = {},
): AsyncGenerator<string> {
  for await (const row of readPostgresAuditRows(store, options)) yield row.line;
}

/**
 * Writes the chain to `path` as JSONL (one line per event, each ending in a newline; mode 0600), the
 * format `acp audit verify` and `verifyAuditChain` read. Returns how many lines were written. A row longer
 * than any audit line is written as the stand-in {@link readPostgresAuditPages} gives (it fails verification
 * there as the row does here).
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

/** Options of {@link verifyPostgresAuditChain}. */
export interface VerifyPostgresAuditOptions extends VerifyAuditOptions {
  /** With `from`: verify the rows after this `seq` (the prefix's last row). */
  readonly afterSeq?: number;
  /** Rows fetched per query (default 1000). */
  readonly pageSize?: number;
  /** Called with each page's last row as the page is read (the last call: the last row read). */
  readonly onPage?: (last: PostgresAuditRow) => void;
}

/** A verification of the chain in PostgreSQL and the `seq` of the last row read. */
export interface PostgresAuditVerification {
  readonly verification: AuditVerification;
  /** `seq` of the last row read (with an `ok` verification: the last row verified); `afterSeq` when none. */
  readonly lastSeq: number;
}

/**
 * Verifies the chain with {@link verifyAuditStream}, reading it page by page: one page in memory
 * (after a broken link the rows are read again from the first to name the problem), with the `seq` of
 * the last row read, to continue from.
 */
export async function verifyPostgresAuditRows(
  store: PostgresStore,
  options: VerifyPostgresAuditOptions = {},
): Promise<PostgresAuditVerification> {
  const { afterSeq, pageSize, onPage, ...verify } = options;
  const paging = pageSize === undefined ? {} : { pageSize };
  let lastSeq = Math.max(0, Math.floor(afterSeq ?? 0));
  const linesOf = async function* (pages: AsyncIterable<PostgresAuditRow[]>): AsyncGenerator<string[]> {
    for await (const page of pages) yield page.map((row) => row.line);
  };
  async function* lines(): AsyncGenerator<string[]> {
    for await (const page of readPostgresAuditPages(store, { ...paging, afterSeq: lastSeq })) {
      const last = page[page.length - 1] as PostgresAuditRow;
      lastSeq = last.seq;
      onPage?.(last);
      yield page.map((row) => row.line);
    }
  }
  const verification = await verifyAuditStream(lines(), {
    ...verify,
    reread: () => linesOf(readPostgresAuditPages(store, paging)),
  });
  return { verification, lastSeq };
}

/** Verifies the whole chain with {@link verifyAuditStream}, reading it page by page (one page in memory). */
export async function verifyPostgresAuditChain(
  store: PostgresStore,
  options: VerifyAuditOptions = {},
): Promise<AuditVerification> {
  return (await verifyPostgresAuditRows(store, options)).verification;
}
