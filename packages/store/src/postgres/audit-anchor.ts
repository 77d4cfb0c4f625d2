import {
  parseAuditLine,
  readCheckpoint,
  verifyAuditChain,
  verifyCheckpointSignature,
  type AuditChainPosition,
  type CheckpointPublicKey,
} from "@acp/core";
import { readAnchorFile } from "../audit/anchor.js";
import { AuditLogError } from "../audit/index.js";
import { writeFileAtomic } from "../home/atomic-write.js";
import { HOME_FILE_MODE } from "../home/paths.js";
import {
  hasPostgresAnchoredMarker,
  markPostgresAnchored,
  postgresAnchoredMarkerPathOf,
  postgresAnchorMissingError,
} from "./anchor-marker.js";
import { readPostgresAuditPage, readPostgresAuditRow } from "./audit-rows.js";

/** Runs one read: on the store (autocommit) or on a transaction's connection. */
export type AnchorQuery = (text: string, values: unknown[]) => Promise<{ readonly rows: readonly unknown[] }>;

/** The rows of one read, as the columns selected. */
async function rowsOf<R>(query: AnchorQuery, text: string, values: unknown[]): Promise<R[]> {
  return (await query(text, values)).rows as R[];
}

/** A signed checkpoint row of the chain: its `seq` (the checkpoint's `count + 1`) and its line. */
interface AnchorRow {
  readonly seq: number;
  readonly line: string;
}

/** Options of {@link openPostgresAuditAnchor}. */
export interface PostgresAuditAnchorOptions {
  /** The node-local file (in its ACP home) that holds the latest checkpoint line this node wrote or verified. */
  readonly path: string;
  /** The key every node signs checkpoints with: only checkpoints it verifies are adopted. */
  readonly publicKey: CheckpointPublicKey;
  /** Rows read per query while catching up (default 1000). */
  readonly pageSize?: number;
  /**
   * Told once, at open, before a first use verifies a chain that holds a checkpoint (this home has no anchor
   * for it): how many rows. That read takes about as long as `acp audit verify` on the chain, before the node starts
   * ({@link postgresFirstAnchorStartMessage}).
   */
  readonly onFirstUse?: (rows: number) => void;
  /**
   * Called before each write of the anchor file (a throw leaves the anchor unwritten): `acp serve` records
   * there which database the connection reached (`PostgresAuditAnchorPlace.recordDatabase`).
   */
  readonly beforeWrite?: () => void;
}

/**
 * A node's anchor on the shared chain in PostgreSQL. The writer signs a checkpoint over whatever the table
 * holds: without an anchor, whoever can write the database (not the nodes' key) could rewrite history,
 * drop the checkpoints the rewrite broke, and have the next node sign a checkpoint over the result, after
 * which `acp audit verify` said intact. The anchor (a file in the node's home, outside the database) names
 * the latest signed checkpoint this node wrote or verified; {@link sync} refuses (`audit_anchor_mismatch`)
 * unless the table still holds that row byte for byte and every row after it links to it.
 */
export interface PostgresAuditAnchor {
  readonly path: string;
  /**
   * Checks the table against the anchor and moves the anchor forward to the newest checkpoint after it
   * that verifies with the key (another node's too). With no anchor yet, verifies the chain from its first
   * row (hashes, links, checkpoint places, no row missing; from where it stopped on a later call) and adopts
   * the newest checkpoint row that verifies with the key (trust on first use of the key's signature, not of
   * the rows). Throws `audit_anchor_mismatch`, or `audit_anchor_missing` for a chain without an anchor
   * that does not verify.
   */
  sync(query: AnchorQuery): Promise<void>;
  /** Throws the mismatch found before, if any: once found, the writer takes nothing more (as the file log). */
  check(): void;
  /** The mismatch found before, or null. */
  error(): AuditLogError | null;
  /**
   * The checkpoint line this node holds the chain to now (the anchor file's as read at open or as last
   * written), or null before it has one. Kept in memory: the file deleted, or replaced by an older
   * checkpoint's line, while the node runs does not change it (`acp serve`'s `GET /v1/audit/verify`
   * verifies against it then).
   */
  heldLine(): string | null;
  /** After a checkpoint row this node wrote was committed: it becomes the anchor. */
  wrote(seq: number, line: string): void;
  /**
   * What the opening found when this home had no anchor for the database and the chain already held a
   * checkpoint (a node's first start here, or an anchor lost): how many rows it verified from row 1 and the
   * checkpoint it anchored at, if one verified with the key. `null` when an anchor was there, or the chain
   * held no checkpoint (empty, or before its first: no node keeps an anchor yet, nothing was lost).
   * Told on `acp serve`'s start-up output ({@link postgresFirstAnchorMessage}).
   */
  readonly firstAnchor: PostgresFirstAnchor | null;
}

/** What a node's opening did with a chain it found without an anchor for it ({@link PostgresAuditAnchor.firstAnchor}). */
export interface PostgresFirstAnchor {
  /** Rows verified from row 1 (the chain's length when found). */
  readonly rows: number;
  /** The row of the checkpoint anchored at (the newest that verifies with the key), or null when none did. */
  readonly checkpointRow: number | null;
  /** Checkpoint rows the chain held, whatever key signed them. */
  readonly checkpoints: number;
}

/**
 * The line `acp serve` tells at start, before its node verifies a chain of `rows` rows it has no anchor for
 * (a first start on a database, or an anchor lost): a long chain takes a while, and nothing else is said
 * until the node listens.
 */
export function postgresFirstAnchorStartMessage(path: string, rows: number): string {
  return (
    `this home has no anchor (${path}) for the audit chain in PostgreSQL, which holds ` +
    `${rows === 1 ? "1 row" : `${rows} rows`}: verifying it from row 1 before anchoring it and starting ` +
    "(about as long as `acp audit verify --storage-url …` takes on it)"
  );
}

/**
 * The one line `acp serve` tells when its node found the chain in PostgreSQL with rows and no anchor for it
 * in its home: that it verified them from row 1 and where it anchored (or that no checkpoint signed with the
 * home's key was there to anchor at), and what to do when this was not the node's first start here.
 */
export function postgresFirstAnchorMessage(path: string, found: PostgresFirstAnchor): string {
  const rows = found.rows === 1 ? "1 row" : `${found.rows} rows`;
  const head =
    `the audit chain in PostgreSQL held ${rows} and this home no anchor for it (${path}): verified from row 1 ` +
    "(every row's hash, its link to the row before, each checkpoint at its place, no row missing) and ";
  let anchored: string;
  if (found.checkpointRow === null) {
    const n = found.checkpoints === 1 ? "1 checkpoint" : `${found.checkpoints} checkpoints`;
    anchored =
      `not anchored: none of its ${n} verifies with this home's key (\`acp audit verify\` reports it), so no ` +
      "signature this node can check covers those rows; this node anchors at the first checkpoint it signs or verifies";
  } else {
    const n = found.rows - found.checkpointRow;
    const after =
      n === 0
        ? "nothing after it"
        : `${n === 1 ? "1 row" : `${n} rows`} after it, unsigned when found, signed by the next checkpoint`;
    anchored = `anchored at its newest checkpoint signed with this home's key, row ${found.checkpointRow} (${after})`;
  }
  return (
    `${head}${anchored}; expected on this node's first start on this database, otherwise find out why the ` +
    "anchor was missing (`acp audit verify --storage-url …` checks the chain; another node's anchor file can be copied)"
  );
}

/** The chain position just after a checkpoint row, to continue a verification from it. */
function positionAt(row: AnchorRow): AuditChainPosition | null {
  const parsed = parseAuditLine(row.line);
  if (!parsed.ok || parsed.value.event_type !== "checkpoint") return null;
  const read = readCheckpoint(parsed.value);
  if (!read.ok || read.value.body.count + 1 !== row.seq) return null;
  const body = read.value.body;
  return {
    count: row.seq,
    head: parsed.value.event_hash,
    checkpoints: 1,
    lastCheckpoint: { line: row.seq, count: body.count, headHash: body.head_hash, timestamp: body.timestamp },
  };
}

/** Whether a line is a checkpoint for `seq` whose signature verifies with the key. */
function verifiedCheckpoint(row: AnchorRow, publicKey: CheckpointPublicKey): boolean {
  const parsed = parseAuditLine(row.line);
  if (!parsed.ok || parsed.value.event_type !== "checkpoint") return false;
  const read = readCheckpoint(parsed.value);
  if (!read.ok || read.value.body.count + 1 !== row.seq) return false;
  return verifyCheckpointSignature(read.value.body, read.value.signature, publicKey);
}

function readAnchorRow(path: string): AnchorRow | null {
  let line: string;
  try {
    line = readAnchorFile(path, { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const parsed = parseAuditLine(line);
  const read = parsed.ok && parsed.value.event_type === "checkpoint" ? readCheckpoint(parsed.value) : undefined;
  if (read?.ok !== true) throw mismatch(path, "the anchor is not a checkpoint line");
  return { seq: read.value.body.count + 1, line };
}

function mismatch(path: string, why: string): AuditLogError {
  return new AuditLogError(
    { code: "audit_anchor_mismatch" },
    `the audit chain in PostgreSQL: ${why}: the chain was cut, rewritten or replaced after this node's signed checkpoint ` +
      `(${path}); refusing to extend and sign it (run \`acp audit verify --storage-url …\` to find where; ` +
      "a database restored from a backup older than that checkpoint, or emptied, reads the same, and so does " +
      "an anchor brought along in a home copied from a node of another database of the same name on a clone of " +
      "this cluster, or one moved from its name of before 28 Nov 2026, which a URL's text shared with another " +
      "database (PGHOST, PGPORT, PGDATABASE): once you know which, move that file and its marker " +
      `${postgresAnchoredMarkerPathOf(path)} aside, and the next start verifies the chain from row 1 and anchors it again)`,
  );
}

function unverified(path: string, why: string): AuditLogError {
  return new AuditLogError(
    { code: "audit_anchor_missing" },
    `the audit chain in PostgreSQL: this node has no anchor for it yet (${path}) and ${why}: ` +
      "the chain was damaged or rewritten; refusing to anchor, extend and sign it " +
      "(run `acp audit verify --storage-url …` to find where; put back this node's anchor if it was lost, " +
      "or copy another node's)",
  );
}

/**
 * Reads the node's anchor and checks the database against it (or, with none, verifies the chain and adopts
 * the newest checkpoint that verifies with the key), as {@link PostgresAuditAnchor.sync}. Throws
 * `audit_anchor_mismatch` or `audit_anchor_missing`; the latter at once, before anything is read, when the
 * anchor is missing and its marker (`postgresAnchoredMarkerPathOf`) says this home had one. Writes the
 * marker after the first anchor is in place, and at open beside an anchor that has none.
 */
export async function openPostgresAuditAnchor(
  query: AnchorQuery,
  options: PostgresAuditAnchorOptions,
): Promise<PostgresAuditAnchor> {
  const { path, publicKey } = options;
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 1000));
  let held = readAnchorRow(path);
  // the marker says this home had an anchor for the database: a start without it would verify what is left
  // from row 1 and anchor it, a cut from the chain's end included
  if (held === null && hasPostgresAnchoredMarker(path)) throw postgresAnchorMissingError(path);
  if (held !== null) markPostgresAnchored(path); // an anchor written before markers, or a stop in between

  const adopt = (row: AnchorRow): void => {
    if (held !== null && row.seq <= held.seq) return; // only forward
    options.beforeWrite?.();
    writeFileAtomic(path, `${row.line}\n`, HOME_FILE_MODE);
    const first = held === null;
    held = row;
    if (first) markPostgresAnchored(path); // after the anchor is in place, never before
  };

  /** With no anchor: how far the chain was verified from its first row (its last row, and the position after it). */
  let verified: { row: AnchorRow; from: AuditChainPosition } | null = null;

  /**
   * With no anchor: verifies the chain from its first row (from where the last call stopped), every row's
   * hash, its link to the row before and each checkpoint's place, with no row missing, and adopts the
   * newest checkpoint row that verifies with the key, if any. Its signature covers every row before it
   * through the links, so nothing before it can have been rewritten; a chain that does not verify is
   * refused (`audit_anchor_missing`) before this node anchors and signs it.
   */
  /** Until the opening's sync is done: a first use then says how many rows it is about to verify. */
  let opening = true;
  const firstUse = async (q: AnchorQuery): Promise<PostgresFirstAnchor> => {
    const start = verified;
    if (opening && start === null && options.onFirstUse !== undefined) {
      // only a chain with a checkpoint: before one, no node keeps an anchor, and the chain is short
      // two index reads (the newest row; the first checkpoint, within its first 1001 rows), not a scan
      const [head] = await rowsOf<{ n: number | string; signed: boolean }>(
        q,
        `SELECT (SELECT COALESCE(MAX(seq), 0) FROM acp_audit_events) AS n,
           EXISTS (SELECT 1 FROM acp_audit_events WHERE event_type = 'checkpoint' ORDER BY seq LIMIT 1) AS signed`,
        [],
      );
      const rows = Number(head?.n ?? 0);
      if (rows > 0 && head?.signed === true) options.onFirstUse(rows);
    }
    if (start !== null) {
      const found = await readPostgresAuditRow(q, start.row.seq);
      if (found?.line !== start.row.line)
        throw unverified(path, `its row ${start.row.seq}, verified before, was changed or removed`);
    }
    let after = start?.row.seq ?? 0;
    let from = start?.from;
    let newest: AnchorRow | null = null;
    for (;;) {
      const { rows, more } = await readPostgresAuditPage(q, after, pageSize);
      if (rows.length === 0) break;
      for (const [i, r] of rows.entries())
        if (r.seq !== after + i + 1) throw unverified(path, `its row ${after + i + 1} is missing`);
      const checked = verifyAuditChain(
        rows.map((r) => r.line),
        from === undefined ? {} : { from },
      );
      if (!checked.ok) {
        const problem = checked.problem;
        throw unverified(
          path,
          `its row ${problem?.line ?? after + 1} does not verify${problem === null ? "" : ` (${problem.code})`}`,
        );
      }
      from = checked;
      for (const r of rows) if (verifiedCheckpoint(r, publicKey)) newest = r;
      const last = rows.at(-1) as AnchorRow;
      after = last.seq;
      verified = { row: last, from };
      if (!more) break;
    }
    if (newest !== null) adopt(newest);
    return { rows: after, checkpointRow: held?.seq ?? null, checkpoints: from?.checkpoints ?? 0 };
  };

  let broken: AuditLogError | null = null;
  const check = (): void => {
    if (broken !== null) throw broken;
  };
  const sync = async (q: AnchorQuery): Promise<PostgresFirstAnchor | null> => {
    check();
    try {
      return await syncOnce(q);
    } catch (err) {
      if (err instanceof AuditLogError) broken = err;
      throw err;
    }
  };
  const syncOnce = async (q: AnchorQuery): Promise<PostgresFirstAnchor | null> => {
    const first = held === null ? await firstUse(q) : null;
    const anchor = held;
    if (anchor === null) return first; // nothing signed yet that this node can verify: nothing to hold
    const row = await readPostgresAuditRow(q, anchor.seq);
    if (row === undefined) throw mismatch(path, `it no longer has row ${anchor.seq}, this node's signed checkpoint`);
    if (row.line !== anchor.line) throw mismatch(path, `its row ${anchor.seq} is not this node's signed checkpoint`);
    let from = positionAt(anchor);
    if (from === null) throw mismatch(path, "the anchor is not a checkpoint line at its place");
    let newest: AnchorRow | null = null;
    for (let after = anchor.seq; ;) {
      const page = await readPostgresAuditPage(q, after, pageSize);
      if (page.rows.length === 0) break;
      for (const [i, r] of page.rows.entries()) {
        if (r.seq !== after + i + 1)
          throw mismatch(path, `row ${after + i + 1} is missing after this node's checkpoint`);
      }
      // hashes, links and checkpoint places only: a checkpoint of another key is reported by `acp audit verify`
      const checked = verifyAuditChain(
        page.rows.map((r) => r.line),
        { from },
      );
      if (!checked.ok) {
        const at = checked.problem?.line ?? after + 1;
        throw mismatch(path, `row ${at} after this node's signed checkpoint (row ${anchor.seq}) does not link to it`);
      }
      from = checked;
      for (const r of page.rows) if (verifiedCheckpoint(r, publicKey)) newest = r;
      after = (page.rows.at(-1) as { seq: number }).seq;
      if (!page.more) break;
    }
    if (newest !== null) adopt(newest);
    return first;
  };

  const opened = await sync(query);
  opening = false;
  return {
    path,
    sync: async (q) => {
      await sync(q);
    },
    check,
    error: () => broken,
    heldLine: () => held?.line ?? null,
    firstAnchor: opened !== null && opened.checkpoints > 0 ? opened : null,
    wrote: (seq, line) => {
      try {
        adopt({ seq, line });
      } catch {
        // the anchor stays at the older checkpoint, which the chain still holds; the next sync adopts this one
      }
    },
  };
}
