/**
 * The marker beside a node's anchor on the PostgreSQL chain: `audit-postgres-<id>.anchored` beside
 * `audit-postgres-<id>.checkpoint`, as `audit.jsonl.anchored` is beside the file log's anchor. A node with no
 * anchor for a database treats its start as a first one: it verifies the chain from row 1 and anchors at the
 * newest checkpoint left, which cannot tell rows cut from the chain's end. So the anchor deleted with the
 * chain cut back (to an earlier checkpoint, or to nothing) was vouched for by the next start. The marker,
 * written once the anchor is in place and never removed by acp, says the anchor existed: a node refuses a
 * database whose anchor is missing while the marker is there (`audit_anchor_missing`), and `acp audit verify
 * --storage-url` fails it (`anchor_missing`).
 */
import { lstatSync } from "node:fs";
import { AuditLogError } from "../audit/index.js";
import { writeFileAtomic } from "../home/atomic-write.js";
import { HOME_FILE_MODE } from "../home/paths.js";

/** `audit-postgres-<id>.anchored` for `audit-postgres-<id>.checkpoint`; `<path>.anchored` for any other name. */
export function postgresAnchoredMarkerPathOf(anchorPath: string): string {
  return anchorPath.endsWith(".checkpoint")
    ? `${anchorPath.slice(0, -".checkpoint".length)}.anchored`
    : `${anchorPath}.anchored`;
}

/**
 * Whether the anchor's marker is there. Anything at that name counts (a directory, a link, a file that
 * cannot be read): only removing it weakens the check, so nothing but a missing name says "never anchored".
 */
export function hasPostgresAnchoredMarker(anchorPath: string): boolean {
  try {
    lstatSync(postgresAnchoredMarkerPathOf(anchorPath));
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** What the marker holds: a line for whoever finds it. Only its presence is read. */
const MARKER_TEXT =
  "this node has had an anchor on the audit chain in PostgreSQL beside this file: without it, acp serve refuses " +
  "the database (audit_anchor_missing) and acp audit verify fails it (anchor_missing) (acp docs reference/audit)\n";

/**
 * Writes the marker when it is not there: after the anchor is in place, never before (a node stopped in
 * between leaves an anchor and no marker, which its next start writes).
 */
export function markPostgresAnchored(anchorPath: string): void {
  if (!hasPostgresAnchoredMarker(anchorPath))
    writeFileAtomic(postgresAnchoredMarkerPathOf(anchorPath), MARKER_TEXT, HOME_FILE_MODE);
}

/** Why the anchor must be there: its marker says it was. The first half of {@link postgresAnchorMissingError}'s message. */
export function postgresAnchorMissingReason(anchorPath: string): string {
  return (
    `this node's anchor for it (${anchorPath}) is missing, though ${postgresAnchoredMarkerPathOf(anchorPath)} ` +
    "records that it had one: the anchor was deleted (perhaps with the chain cut back) or moved without its marker"
  );
}

/**
 * A node's refusal of a database whose anchor is missing while its marker is there (`audit_anchor_missing`):
 * nothing verified, anchored or signed, and what to do.
 */
export function postgresAnchorMissingError(anchorPath: string): AuditLogError {
  const marker = postgresAnchoredMarkerPathOf(anchorPath);
  return new AuditLogError(
    { code: "audit_anchor_missing" },
    `the audit chain in PostgreSQL: ${postgresAnchorMissingReason(anchorPath)}; refusing to anchor, extend and ` +
      "sign it, since a start without the anchor cannot tell rows cut from the chain's end (put the anchor back if " +
      "a copy was kept, or copy another node's of the same name: `acp audit verify --storage-url … --anchor FILE` " +
      `checks the chain against a copy; once you know why it is gone, remove ${marker}: the next start verifies ` +
      "the chain from row 1 and anchors it again; to start a new chain on purpose, move every node's anchor and " +
      "marker aside)",
  );
}
