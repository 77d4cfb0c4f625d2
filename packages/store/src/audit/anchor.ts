import { lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { MAX_AUDIT_LINE_LENGTH } from "@acp/core";
import { stageFileAtomic, writeFileAtomic, type StagedFile } from "../home/atomic-write.js";
import { HOME_FILE_MODE } from "../home/paths.js";
import { FileNotOwnedError, notOwnedMessage, trustFileOwners } from "../home/owner.js";
import { readFileUpTo, type ReadUpToOptions } from "../home/read-up-to.js";

/** Where the latest checkpoint of a log is kept: `<log>.checkpoint`. */
export function anchorPathOf(logPath: string): string {
  return `${logPath}.checkpoint`;
}

/**
 * Where a writer records that a log has had an anchor: `<log>.anchored`. Written once the first anchor is
 * in place (and at each open of a log that has one), never removed by acp: an anchor missing beside a log
 * that has this marker was deleted (or moved without the log), so `acp audit verify` fails it
 * (`anchor_missing`) and a writer refuses to extend it (`audit_anchor_missing`), where a log that never had
 * one (moved or copied without it, written before anchors) is verified in full and anchored again.
 */
export function anchoredMarkerPathOf(logPath: string): string {
  return `${logPath}.anchored`;
}

/** What the marker holds: a line for whoever finds it. Only its presence is read. */
const MARKER_TEXT =
  "this audit log has had a checkpoint anchor beside it: without one, acp audit verify fails it (anchor_missing) " +
  "and acp proxy, acp run and acp serve refuse to extend it (acp docs reference/audit)\n";

/**
 * Whether the log's {@link anchoredMarkerPathOf} marker is there. Anything at that name counts (a
 * directory, a link, a file that cannot be read): only removing it weakens the check, so nothing there
 * but a missing name says "never anchored".
 */
export function hasAnchoredMarker(logPath: string): boolean {
  try {
    lstatSync(anchoredMarkerPathOf(logPath));
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Logs whose marker this process wrote or found since it wrote their anchor: checked once per log, not per anchor. */
const markedLogs = new Set<string>();

/**
 * Writes the log's marker ({@link anchoredMarkerPathOf}) when it is not there: after an anchor is in place,
 * never before (a writer stopped in between leaves an anchor and no marker, which the next open writes).
 */
export function markAnchored(logPath: string): void {
  if (!hasAnchoredMarker(logPath))
    writeFileAtomic(anchoredMarkerPathOf(logPath), MARKER_TEXT, HOME_FILE_MODE, anchorOwner(logPath));
  markedLogs.add(logPath);
}

/**
 * Replaces the anchor atomically with the latest checkpoint line ({@link writeFileAtomic}: a temporary
 * file of a random name created exclusively without following links, fsynced, renamed, the directory
 * fsynced). Written only after that line is durable in the log, so the anchor never points past the log's
 * durable end; `acp audit verify` then detects a log cut after a checkpoint. Then the log is marked as
 * anchored ({@link markAnchored}).
 */
export function writeAnchor(logPath: string, checkpointLine: string): void {
  writeFileAtomic(anchorPathOf(logPath), `${checkpointLine}\n`, HOME_FILE_MODE, anchorOwner(logPath));
  markAnchored(logPath);
}

/**
 * Who the anchor is given to: root writing a log another user owns (`sudo -E acp run` in a person's home)
 * gives the anchor to the log's owner, whose own `acp proxy` must read it when it opens the log (a
 * root-owned 0600 anchor made every later writer of that person fail: `EACCES`). Otherwise nobody: the
 * anchor is the writer's, as the log is.
 */
function anchorOwner(logPath: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = statSync(logPath, { throwIfNoEntry: false });
  return st === undefined || st.uid === 0 ? undefined : { uid: st.uid, gid: st.gid };
}

/** An anchor being replaced by the writer: its temporary file is under way, the rename not yet done. */
export type PendingAnchor = StagedFile;

/**
 * {@link writeAnchor} for the writer, without blocking the event loop and in two halves
 * ({@link stageFileAtomic}): the temporary file is written and fsynced (and the directory opened) at once,
 * while the log's own write and `fdatasync` are in flight, since nothing reads it under that name;
 * `commit`, called only after the log's `fdatasync` returned, does the rename and the directory fsync. So
 * the anchor never names a line that is not durable in the log, and a batch waits for one fsync less in a row.
 * The first `commit` for a log in this process also marks it as anchored ({@link markAnchored}).
 */
export function beginAnchor(logPath: string, checkpointLine: string): PendingAnchor {
  const staged = stageFileAtomic(anchorPathOf(logPath), `${checkpointLine}\n`, HOME_FILE_MODE, anchorOwner(logPath));
  return {
    abandon: () => staged.abandon(),
    // the first anchor of a log this process writes also marks it (once per process: not a step per batch)
    commit: async () => {
      await staged.commit();
      if (!markedLogs.has(logPath)) markAnchored(logPath);
    },
  };
}

/** Most bytes of an anchor read: a line of the longest length the verifier reads (it is one line, far shorter). */
const MAX_ANCHOR_BYTES = 3 * MAX_AUDIT_LINE_LENGTH + 1;

/**
 * Reads an anchor file (at most a line's bytes: a larger file, `/dev/zero` or an endless pipe is not read
 * on, and gives a stand-in longer than any line, which the verifier refuses as `not_json` of the anchor).
 * Throws as `readFileSync` does; with `regularOnly` (the anchor beside a log, or a PostgreSQL anchor or
 * connection record in the home) a pipe or a device is refused, and so is one owned by another user than
 * {@link trustFileOwners} of its folder allows: a {@link FileNotOwnedError} naming the file, its owner and the
 * `chown` fix (whoever owns an anchor can replace it and hide a cut of the log). One a person names
 * (`--anchor FILE`) is read whoever owns it.
 */
export function readAnchorFile(path: string, options: ReadUpToOptions = {}): string {
  const owners =
    options.regularOnly === true && options.owners === undefined ? trustFileOwners(dirname(path)) : undefined;
  let bytes: Buffer | undefined;
  try {
    bytes = readFileUpTo(path, MAX_ANCHOR_BYTES, owners !== undefined ? { ...options, owners } : options);
  } catch (err) {
    if (err instanceof FileNotOwnedError)
      err.message = notOwnedMessage(err, "whoever owns an audit anchor can replace it and hide a cut of the log");
    throw err;
  }
  return bytes === undefined ? "x".repeat(MAX_AUDIT_LINE_LENGTH + 1) : bytes.toString("utf8").trim();
}

/** Reads the anchor beside a log, or `undefined` when there is none. */
export function readAnchor(logPath: string): string | undefined {
  try {
    return readAnchorFile(anchorPathOf(logPath), { regularOnly: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
