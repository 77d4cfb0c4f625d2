import { createPublicKey, KeyObject } from "node:crypto";
import { parseAuditLine, verifyAuditStream, type CheckpointPublicKey, type CheckpointSigner } from "@acp/core";
import { anchoredMarkerPathOf, hasAnchoredMarker, readAnchor } from "./anchor.js";
import { AuditLogError } from "./audit-log-error.js";
import { readAuditFileLines } from "./read-lines.js";
import { CHECKPOINT_MARKER_TEXT, EMPTY_POSITION, scanAuditLog } from "./scan-log.js";

/** The last signed checkpoint of a log without an anchor, verified with the key, to anchor the log at. */
export interface AdoptedCheckpoint {
  /** Its 1-based line number. */
  readonly line: number;
  /** The line as the log holds it, without newline. */
  readonly text: string;
  /** Complete lines the log held when it was verified (the checkpoint's and those after it included). */
  readonly lines: number;
}

/** What a writer tells of a log it found with signed checkpoints and no anchor, verified and anchored again. */
export interface Reanchored {
  /** The line of the checkpoint the anchor was written for. */
  readonly line: number;
  /** Lines after it, which no signature covered when they were found (the next checkpoint signs them). */
  readonly linesAfter: number;
}

/**
 * The one line a command tells the person when its writer found the log with signed checkpoints and no
 * anchor beside it, verified it in full and anchored it again (`AuditLog.reanchored`): which log, the anchor
 * file made, and that the lines after that checkpoint were not covered by a signature when found. Shared by
 * `acp proxy`, `acp run`, the guard (the home audit sink) and `acp serve`.
 */
export function reanchoredMessage(log: { readonly path: string; readonly anchorPath: string }, at: Reanchored): string {
  const n = at.linesAfter;
  const after =
    n === 0
      ? "nothing after it"
      : `${n === 1 ? "1 line" : `${n} lines`} after it, unsigned when found, signed by the next checkpoint`;
  return (
    `the audit log ${log.path} had signed checkpoints but no anchor beside it: verified in full as ` +
    `\`acp audit verify\` does (every hash, link and checkpoint signature, with the home's public key) and ` +
    `anchored again at its checkpoint on line ${at.line} in ${log.anchorPath} (${after}); if you did not ` +
    `move or restore the log, find out why the anchor was missing`
  );
}

/** The key checkpoints are verified with: the one given, or the public half of a private `KeyObject` signer. */
export function publicKeyOf(
  signer: CheckpointSigner | undefined,
  given: CheckpointPublicKey | undefined,
): CheckpointPublicKey | undefined {
  if (given !== undefined) return given;
  if (signer instanceof KeyObject) return createPublicKey(signer);
  return undefined;
}

function missing(path: string, why: string): AuditLogError {
  return new AuditLogError(
    { code: "audit_anchor_missing" },
    `${path}: it holds signed checkpoints but no anchor (\`${path}.checkpoint\`) and ${why}: it may have been rewritten after the anchor was removed; refusing to extend and sign it (run \`acp audit verify\`; if the log was moved or copied, put its anchor beside it; to start a new log, move the log aside)`,
  );
}

/**
 * The refusal of a log whose anchor is gone though its marker ({@link anchoredMarkerPathOf}) says it had
 * one: the anchor was deleted, maybe with the log cut back, which nothing can tell any more; verifying the
 * rest and anchoring it again (as for a log that never had one) would vouch for the cut.
 */
export function anchorRemovedError(path: string): AuditLogError {
  const marker = anchoredMarkerPathOf(path);
  return new AuditLogError(
    { code: "audit_anchor_missing" },
    `${path}: its anchor (\`${path}.checkpoint\`) is missing, though \`${marker}\` records that it had one: the anchor was deleted (a cut of the log after a checkpoint cannot be told without it); refusing to extend and sign it (run \`acp audit verify\`; put the anchor back if a copy was kept; once you know why it is gone, remove \`${marker}\` and the next writer verifies the log in full and anchors it again; to start a new log, move the log and \`${marker}\` aside)`,
  );
}

/**
 * For a writer about to extend a log that has no anchor beside it (moved or copied without it, written
 * before anchors, or the anchor deleted): when the log holds a checkpoint, verifies all of it (every line's
 * hash and link, every checkpoint's place and signature with `publicKey`) before the writer anchors it at
 * its last checkpoint and signs anything more. Without the anchor the writer cannot tell a log cut or
 * rewritten after some checkpoint; what it can refuse is a log that `acp audit verify` would not call intact
 * (a rewrite that kept a checkpoint it broke, a checkpoint of another key), and it does
 * (`audit_anchor_missing`), as it does when it has no public key to verify with, and when the log's marker
 * says it had an anchor ({@link anchorRemovedError}: it was deleted, not missing from the start). Read without the lock (it
 * may take a while on a large log); the caller checks under the lock that the checkpoint is still at its
 * line. An unterminated last line (a torn write) is left out: the writer moves it aside. Returns `null`
 * when there is an anchor, or no checkpoint.
 */
export async function verifyUnanchoredLog(
  path: string,
  fd: number,
  publicKey: CheckpointPublicKey | undefined,
): Promise<AdoptedCheckpoint | null> {
  if (readAnchor(path) !== undefined) return null;
  // it had one: nothing is verified or anchored (the log may have been cut with it)
  if (hasAnchoredMarker(path)) throw anchorRemovedError(path);
  // a quick look first: a log with no checkpoint marker at all holds nothing signed to keep
  const scan = scanAuditLog(fd, EMPTY_POSITION, path);
  if (scan.position.count === scan.position.sinceCheckpoint) return null;
  if (publicKey === undefined) throw missing(path, "there is no public key to verify its checkpoints with");
  let last: { line: number; text: string } | null = null;
  let lines = 0;
  /** The complete lines of the log, the last checkpoint line among them remembered. */
  const complete = (remember: boolean) =>
    async function* (): AsyncGenerator<string[]> {
      const reader = readAuditFileLines(path);
      for await (const batch of reader.batches()) {
        const whole = reader.progress.unterminated ? batch.slice(0, -1) : batch;
        if (remember) {
          for (const text of whole) {
            lines++;
            if (text.includes(CHECKPOINT_MARKER_TEXT)) {
              const parsed = parseAuditLine(text);
              if (parsed.ok && parsed.value.event_type === "checkpoint") last = { line: lines, text };
            }
          }
        }
        yield whole;
      }
    };
  const verification = await verifyAuditStream(complete(true)(), { publicKey, reread: complete(false) });
  if (!verification.ok) {
    const p = verification.problem;
    throw missing(path, `it does not verify with the key${p === null ? "" : ` (line ${p.line}: ${p.code})`}`);
  }
  const checkpoint = verification.lastCheckpoint;
  if (checkpoint === null) return null;
  const held = last as { line: number; text: string } | null;
  if (held?.line !== checkpoint.line)
    throw missing(path, `its checkpoint at line ${checkpoint.line} could not be read back`);
  return { line: held.line, text: held.text, lines };
}
