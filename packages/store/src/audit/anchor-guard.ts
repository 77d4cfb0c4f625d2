import { readSync } from "node:fs";
import { parseAuditLine, readCheckpoint, verifyCheckpointSignature, type CheckpointPublicKey } from "@acp/core";
import { hasAnchoredMarker, markAnchored, readAnchor, writeAnchor } from "./anchor.js";
import { AuditLogError } from "./audit-log-error.js";
import type { ScanResult } from "./scan-log.js";
import { anchorRemovedError, type AdoptedCheckpoint, type Reanchored } from "./unanchored-log.js";

/** A checkpoint line the log must still hold, and where. */
interface HeldLine {
  /** Byte offset of its first byte in the log. */
  readonly start: number;
  /** Its bytes and the newline after it. */
  readonly bytes: Buffer;
}

/**
 * Keeps the writer from extending, and so signing, a log that no longer holds its signed past. The writer
 * signs a checkpoint over whatever the file holds: without this, someone who can write the file (not the
 * key) could rewrite history, drop the checkpoints the rewrite broke, and have the next checkpoint sign the
 * result and replace the anchor that told of it (before 27 Nov 2026 `acp audit verify` then said intact).
 *
 * At open the anchor beside the log must be a checkpoint whose line is the log's line `count + 1`, byte for
 * byte, and its signature must verify with the writer's public key (the key it is about to sign with): a log
 * whose anchor another key signed (restored from elsewhere, or the home's keys replaced) would become a log of
 * two keys that `acp audit verify` refuses (`bad_checkpoint_signature`). Without a key to check with (a
 * signer whose key lives only as long as the process, a writer without a signer) only the line's place is
 * checked. Before every later batch, the latest checkpoint line known to this writer (the anchor's, then each
 * one it writes) must still be where it was. Otherwise the writer refuses (`audit_anchor_mismatch`).
 *
 * A log with no anchor whose marker (`<log>.anchored`, written with its first anchor and at each open of an
 * anchored log) says it had one is refused (`audit_anchor_missing`): the anchor was deleted. A log with
 * signed checkpoints, no anchor and no marker was verified in full before the lock was taken
 * ({@link verifyUnanchoredLog}); at open its last checkpoint must still be at its line, and it becomes the
 * anchor (written under the lock), unless another writer wrote an anchor meanwhile, which is then held.
 */
export class AnchorGuard {
  /** At open: the anchor's line and its line number, until the first scan found it. */
  private expected: { readonly line: number; readonly bytes: Buffer } | null = null;
  private held: HeldLine | null = null;
  /** Whether the line expected at open is the verified checkpoint of a log found without an anchor. */
  private adopting = false;
  /** The anchor written at open for a log found with signed checkpoints and none, verified first. */
  reanchored: Reanchored | null = null;

  constructor(
    private readonly path: string,
    private readonly fd: number,
    /** The last checkpoint of the log, verified because it had no anchor ({@link verifyUnanchoredLog}). */
    private readonly adopted: AdoptedCheckpoint | null = null,
    /** The key the anchor's checkpoint must verify with; `undefined`: its signature is not checked. */
    private readonly publicKey: CheckpointPublicKey | undefined = undefined,
  ) {}

  /** Reads the anchor beside the log; returns the line number the first scan must find it at (`undefined`: none). */
  expectAtOpen(): number | undefined {
    const anchor = readAnchor(this.path);
    if (anchor === undefined) {
      // its marker says it had one: deleted (the log perhaps cut back with it), never adopted again
      if (hasAnchoredMarker(this.path)) throw anchorRemovedError(this.path);
      const adopted = this.adopted;
      if (adopted === null) return undefined;
      this.adopting = true;
      this.expected = { line: adopted.line, bytes: Buffer.from(`${adopted.text}\n`, "utf8") };
      return adopted.line;
    }
    const parsed = parseAuditLine(anchor);
    const read = parsed.ok && parsed.value.event_type === "checkpoint" ? readCheckpoint(parsed.value) : undefined;
    if (read?.ok !== true) throw this.mismatch("the anchor beside it is not a checkpoint line");
    const key = this.publicKey;
    if (key !== undefined && !verifyCheckpointSignature(read.value.body, read.value.signature, key))
      throw this.foreign();
    const line = read.value.body.count + 1;
    // a log anchored before markers (or its marker lost) is marked now: from here a missing anchor fails
    markAnchored(this.path);
    this.expected = { line, bytes: Buffer.from(`${anchor}\n`, "utf8") };
    return line;
  }

  /** After the first scan: the anchor's line must be in the log at its place. */
  settleOpen(scan: ScanResult): void {
    const expected = this.expected;
    this.expected = null;
    if (expected === null) return;
    const found = scan.found;
    const held = found === undefined ? null : { start: found.start, bytes: expected.bytes };
    const there = found !== undefined && held !== null && found.end + 1 - found.start === held.bytes.length;
    if (this.adopting) {
      if (!there || !this.stillHeld(held)) throw this.changed(expected.line);
      writeAnchor(this.path, held.bytes.toString("utf8", 0, held.bytes.length - 1));
      this.reanchored = { line: expected.line, linesAfter: scan.position.count - expected.line };
    } else if (found === undefined)
      throw this.mismatch(`it ends before line ${expected.line}, which the anchor's signed checkpoint is`);
    else if (!there || !this.stillHeld(held))
      throw this.mismatch(`its line ${expected.line} is not the anchor's signed checkpoint`);
    this.held = held;
  }

  /** Before a batch: the latest checkpoint line known is still at its place. */
  check(): void {
    if (this.held !== null && !this.stillHeld(this.held))
      throw this.mismatch("a signed checkpoint line it held was changed or removed while open");
  }

  /**
   * After a batch was written from `start`: remembers the last checkpoint line in it (`line`, as written,
   * without newline). A checkpoint line is staged on its own, so it is found as a chunk of its own length.
   */
  wrote(start: number, chunks: readonly Buffer[], line: string): void {
    const bytes = Buffer.from(`${line}\n`, "utf8");
    let found = -1;
    let offset = start;
    for (const chunk of chunks) {
      const at = chunk.length === bytes.length ? (chunk.equals(bytes) ? 0 : -1) : chunk.lastIndexOf(bytes);
      if (at !== -1) found = offset + at;
      offset += chunk.length;
    }
    if (found !== -1) this.held = { start: found, bytes };
  }

  private stillHeld(held: HeldLine): boolean {
    const now = Buffer.alloc(held.bytes.length);
    const read = readSync(this.fd, now, 0, now.length, held.start);
    return read === now.length && now.equals(held.bytes);
  }

  private changed(line: number): AuditLogError {
    return new AuditLogError(
      { code: "audit_anchor_missing" },
      `${this.path}: it has no anchor and its signed checkpoint at line ${line}, verified just before, is no longer there: refusing to extend and sign it (run \`acp audit verify\`)`,
    );
  }

  private foreign(): AuditLogError {
    return new AuditLogError(
      { code: "audit_anchor_mismatch" },
      `${this.path}: the checkpoint of its anchor (\`${this.path}.checkpoint\`) was not signed by this home's key: the log was signed with another key (restored or copied from elsewhere, or the home's keys were replaced); refusing to extend it and sign it with this key, which would leave a log \`acp audit verify\` refuses (restore the home's keys the log was signed with, or move \`${this.path}\` and \`${this.path}.checkpoint\` aside together, and \`${this.path}.anchored\`, to start a new log)`,
    );
  }

  private mismatch(why: string): AuditLogError {
    return new AuditLogError(
      { code: "audit_anchor_mismatch" },
      `${this.path}: ${why}: the log was cut, rewritten or replaced; refusing to extend and sign it (run \`acp audit verify\`; to start a new log, move the log, \`${this.path}.checkpoint\` and \`${this.path}.anchored\` aside together)`,
    );
  }
}
