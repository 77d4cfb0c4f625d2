/**
 * The chain in `acp_audit_events` as the service verifies it (`GET /v1/audit/verify`, the console's audit
 * page): read page by page, continued after a `seq`, and held to the node's anchor in its home
 * (`audit-postgres-<id>.checkpoint`) as `acp audit verify --storage-url` holds it there. Before 29 Nov 2026 the
 * service read the rows alone: a chain cut back behind the anchor, or cut with the anchor deleted while its
 * marker was there, was reported intact until the node's own check (every 30 s) refused it.
 */
import {
  canContinueAuditVerification,
  failForMissingAnchor,
  parseAuditLine,
  readCheckpoint,
  type AuditVerification,
  type CheckpointPublicKey,
  type VerifyAuditOptions,
} from "@acp/core";
import {
  hasPostgresAnchoredMarker,
  postgresAnchorMissingReason,
  readAnchorFile,
  readPostgresAuditRow,
  verifyPostgresAuditRows,
  type PostgresStore,
} from "@acp/store";
import type { ChainSource, SourceVerification, VerifiedPrefix } from "../continued-verification.js";

/** Where a verification of the table ended: the last verified row. */
export interface RowPlace {
  readonly seq: number;
  /** Its line ("" for an empty chain, `seq` 0). */
  readonly line: string;
}

/** What the chain is verified with. */
export interface TableChainOptions {
  /** Checkpoint signatures (the anchor's too) are checked with this key when given. */
  readonly publicKey: CheckpointPublicKey | undefined;
  /** The node's anchor file; undefined: the node keeps none, the rows are verified on their own. */
  readonly anchorPath: string | undefined;
  /**
   * The checkpoint line the running node holds the chain to (`PostgresAuditAnchor.heldLine`): verified against
   * instead of the file when it is newer, or the file is gone with its marker too (deleted or replaced by an
   * older checkpoint's line while the node runs: the node itself refuses such a chain at its next check).
   */
  readonly heldLine?: () => string | null;
}

/** The node's anchor as the file holds it now, or undefined when there is none (read at each verification). */
function readNodeAnchor(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    // as acp audit verify reads it in the home: a regular file of a trusted owner (else the error says so)
    return readAnchorFile(path, { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** The row an anchor's checkpoint stands at (its `count + 1`), or null when it is not a checkpoint line. */
function anchorRow(anchor: string): number | null {
  const parsed = parseAuditLine(anchor);
  if (!parsed.ok || parsed.value.event_type !== "checkpoint") return null;
  const read = readCheckpoint(parsed.value);
  return read.ok ? read.value.body.count + 1 : null;
}

/**
 * The anchor to verify against: the file's, or the node's held line when that stands at a later row, or the
 * file is gone (a file that is not a checkpoint line is kept: the verifier says what is wrong with it).
 */
function newerAnchor(file: string | undefined, held: string | null): string | undefined {
  if (held === null) return file;
  if (file === undefined) return held;
  const fileRow = anchorRow(file);
  const heldRow = anchorRow(held);
  return fileRow !== null && heldRow !== null && heldRow > fileRow ? held : file;
}

/**
 * The options to continue from `prefix` with, so the result is the one a verification of the whole chain
 * would give; null when the anchor's row no longer holds its line. An anchor after the prefix, or its last
 * checkpoint, is checked by the verifier. One within it (the node's anchor lags the newest checkpoint: another
 * node's, adopted within 30 s; its own, until the file is replaced after the commit) is checked here, one row
 * read: its line at its row, byte for byte, where the prefix's verification found it among rows whose
 * checkpoints verified (an edit in place since is found by the whole verification, as any other).
 */
async function continuing(
  store: PostgresStore,
  prefix: VerifiedPrefix<RowPlace>,
  options: VerifyAuditOptions,
): Promise<VerifyAuditOptions | null> {
  const { anchor, ...rest } = options;
  if (anchor === undefined || canContinueAuditVerification(prefix.verification, options)) return options;
  const seq = anchorRow(anchor);
  if (seq === null) return null;
  // read as the verifier reads it: a row made too long since is its stand-in, never fetched whole
  const row = await readPostgresAuditRow((text, values) => store.query(text, values), seq);
  return row?.line === anchor ? rest : null;
}

/** The chain in `acp_audit_events` as a {@link ChainSource}, held to the node's anchor ({@link TableChainOptions}). */
export function tableChain(store: PostgresStore, chain: TableChainOptions): ChainSource<RowPlace> {
  const { publicKey, anchorPath } = chain;
  /** The options to verify with now, and whether the anchor file is gone while its marker is there. */
  const anchorNow = (): { options: VerifyAuditOptions; marked: boolean } => {
    const file = readNodeAnchor(anchorPath);
    // the file gone while its marker is there is anchor_missing, as acp audit verify in the home says it
    const marked = file === undefined && anchorPath !== undefined && hasPostgresAnchoredMarker(anchorPath);
    const anchor = marked ? undefined : newerAnchor(file, chain.heldLine?.() ?? null);
    const options = { ...(publicKey !== undefined ? { publicKey } : {}), ...(anchor !== undefined ? { anchor } : {}) };
    return { options, marked };
  };
  /**
   * Without its anchor file while the marker says the node had one (deleted, perhaps with the chain cut from
   * its end), the verification fails `anchor_missing` with the reason `acp audit verify --storage-url` gives
   * (not against the line the node still holds: the answer is the one that command in the home gives); null
   * otherwise.
   */
  const anchorGone = (marked: boolean, verification: AuditVerification): AuditVerification | null =>
    marked && anchorPath !== undefined
      ? failForMissingAnchor(verification, postgresAnchorMissingReason(anchorPath))
      : null;
  return {
    async verify(from): Promise<SourceVerification<RowPlace>> {
      const { options, marked } = anchorNow();
      // an anchor whose row no longer holds it (replaced since `holds`) is given to the verifier: it fails
      const given = from === undefined ? options : ((await continuing(store, from, options)) ?? options);
      const resume = from === undefined ? {} : { from: from.verification, afterSeq: from.at.seq };
      let last = from?.at.line ?? "";
      const { verification, lastSeq } = await verifyPostgresAuditRows(store, {
        ...given,
        ...resume,
        onPage: (row) => (last = row.line),
      });
      // (not a place to continue from: the anchor and its marker are looked at again next time)
      const gone = anchorGone(marked, verification);
      if (gone !== null) return { verification: gone };
      return verification.ok ? { verification, at: { seq: lastSeq, line: last } } : { verification };
    },
    async holds(prefix) {
      const { at } = prefix;
      if (at.seq !== 0) {
        // read as the verifier reads it: a row made too long since is its stand-in, never fetched whole
        const row = await readPostgresAuditRow((text, values) => store.query(text, values), at.seq);
        if (row?.line !== at.line) return false;
      }
      return (await continuing(store, prefix, anchorNow().options)) !== null;
    },
  };
}
