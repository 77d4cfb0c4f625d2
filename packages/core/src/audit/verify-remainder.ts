import { readCheckpoint, verifyCheckpointSignature, type CheckpointPublicKey } from "./checkpoint.js";
import { sealAuditLine } from "./event.js";
import { MAX_AUDIT_LINE_LENGTH, parseAuditLine } from "./parse-event.js";

/** A checkpoint as the verifier saw it. */
export interface AuditCheckpointSummary {
  readonly line: number;
  readonly count: number;
  readonly headHash: string | null;
  readonly timestamp: string;
}

/**
 * What the verifier could still tell of the lines after the first problem (for a problem of the anchor,
 * found before any line is read: of every line of the log). None of it makes the log
 * intact: the chain is broken at the problem, and a line after it is only as good as its own content
 * says. It tells a person whether the rest looks like the genuine log behind one bad line (every later
 * line linked, later checkpoints signed with the key) or is damaged as well.
 */
export interface AuditRemainder {
  /**
   * Lines after the problem's line that were read (all of the log's for a problem of the anchor): to the
   * end of the log, unless `complete` is false.
   */
  readonly lines: number;
  /**
   * Of them, lines that are well-formed, hash to their own content and name the line before them as
   * theirs (the first one: the line the problem's line follows, or is meant to, see the problem).
   */
  readonly linked: number;
  /** Well-formed checkpoint lines among them. */
  readonly checkpoints: number;
  /** Of those, how many carry a signature that verifies with the public key; `null` without a key. */
  readonly signedCheckpoints: number | null;
  /**
   * The last of them whose signature verifies, as it claims (its `count` and `headHash` are its own
   * word: that they match its place is not checked after a break).
   */
  readonly lastSignedCheckpoint: AuditCheckpointSummary | null;
  /** False when reading stopped at a line too long to read (its end is not looked for). */
  readonly complete: boolean;
  /**
   * The anchor's checkpoint among these lines, when there is an anchor whose line the intact lines did not
   * reach: `line` is where a line with its `event_hash` was found (its own count says `count + 1`: another
   * place means lines were inserted or removed before it), `null` when none was (the log was also cut or
   * rewritten after the problem). `null` without such an anchor.
   */
  readonly anchor: { readonly expectedLine: number; readonly line: number | null } | null;
}

/** The `event_hash` a line states, or `undefined` when it does not parse as an event. */
export function statedEventHash(text: string): string | undefined {
  const parsed = parseAuditLine(text);
  return parsed.ok ? parsed.value.event_hash : undefined;
}

/**
 * Reads the lines after the first problem, one at a time, holding only the hash of the line before
 * (see {@link AuditRemainder}). Never throws.
 */
export class RemainderCheck {
  private lines = 0;
  private linked = 0;
  private checkpoints = 0;
  private signed = 0;
  private lastSigned: AuditCheckpointSummary | null = null;
  private complete = true;
  /** The line number of the next line. */
  private next: number;
  /** Where the anchor's line was found, if one is looked for. */
  private anchorLine: number | null = null;

  /**
   * @param previous the `event_hash` the first line after the problem should name (`undefined` when no
   *   hash is known: the problem's line did not parse)
   * @param firstLine the line number of the first line after the problem
   */
  constructor(
    private previous: string | null | undefined,
    firstLine: number,
    private readonly publicKey: CheckpointPublicKey | undefined,
    /** The anchor to look for among the lines: its `event_hash` and the line it records. */
    private readonly anchor?: { readonly hash: string; readonly line: number },
  ) {
    this.next = firstLine;
  }

  /**
   * Counts lines verified intact before (a continued verification's prefix, when the problem is the
   * anchor's, found before any line): every one linked, its checkpoints signed when a key is given (the
   * caller vouches they were checked with it).
   */
  countIntactPrefix(prefix: {
    readonly count: number;
    readonly checkpoints: number;
    readonly lastCheckpoint: AuditCheckpointSummary | null;
  }): void {
    this.lines += prefix.count;
    this.linked += prefix.count;
    this.checkpoints += prefix.checkpoints;
    if (this.publicKey !== undefined) {
      this.signed += prefix.checkpoints;
      this.lastSigned = prefix.lastCheckpoint;
    }
  }

  /** Takes the next line; returns whether more are wanted (false after a line too long to read). */
  push(text: string): boolean {
    if (!this.complete) return false;
    const line = this.next++;
    this.lines++;
    if (text.length > MAX_AUDIT_LINE_LENGTH) {
      // a reader skips to the end of such a line: of `/dev/zero` or an endless pipe there is none
      this.complete = false;
      return false;
    }
    const parsed = parseAuditLine(text);
    if (!parsed.ok) {
      this.previous = undefined;
      return true;
    }
    const event = parsed.value;
    const { event_hash: stated, ...body } = event;
    let own = false;
    try {
      const sealed = sealAuditLine(body);
      own = sealed.event.event_hash === stated && sealed.line === text;
    } catch {
      own = false;
    }
    if (own && this.previous !== undefined && event.previous_event_hash === this.previous) this.linked++;
    if (own && this.anchorLine === null && this.anchor !== undefined && stated === this.anchor.hash)
      this.anchorLine = line;
    this.previous = stated;
    if (!own || event.event_type !== "checkpoint") return true;
    const read = readCheckpoint(event);
    if (!read.ok) return true;
    this.checkpoints++;
    const { body: checkpoint, signature } = read.value;
    if (this.publicKey !== undefined && verifyCheckpointSignature(checkpoint, signature, this.publicKey)) {
      this.signed++;
      this.lastSigned = {
        line,
        count: checkpoint.count,
        headHash: checkpoint.head_hash,
        timestamp: checkpoint.timestamp,
      };
    }
    return true;
  }

  /** The anchor's line was found at `line` (before the lines this reads: the problem's own). */
  anchorFoundAt(line: number): void {
    this.anchorLine ??= line;
  }

  /** Reads no further: the problem's own line was too long to read (a reader would look for its end). */
  stop(): void {
    this.complete = false;
  }

  result(): AuditRemainder {
    return {
      lines: this.lines,
      linked: this.linked,
      checkpoints: this.checkpoints,
      signedCheckpoints: this.publicKey === undefined ? null : this.signed,
      lastSignedCheckpoint: this.lastSigned,
      complete: this.complete,
      anchor: this.anchor === undefined ? null : { expectedLine: this.anchor.line, line: this.anchorLine },
    };
  }
}
