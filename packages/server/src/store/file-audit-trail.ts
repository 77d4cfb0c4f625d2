/** The audit chain read from the JSONL file the writer appends to (`$ACP_HOME/audit.jsonl`). */
import { open, stat } from "node:fs/promises";
import {
  canContinueAuditVerification,
  failForMissingAnchor,
  parseAuditLine,
  verifyAuditChain,
  type AuditEventV02,
  type AuditVerification,
  type CheckpointPublicKey,
  type VerifyAuditOptions,
} from "@acp/core";
import {
  anchoredMarkerPathOf,
  countAuditFileLines,
  hasAnchoredMarker,
  readAnchor,
  readAuditFileLinesBackward,
  verifyAuditFile,
  type AuditFileExtent,
} from "@acp/store";
import {
  continuedVerification,
  type ChainSource,
  type ContinuedVerificationOptions,
  type SourceVerification,
} from "./continued-verification.js";
import type { AuditEntry, AuditPage, AuditQuery, AuditTrail } from "./types.js";

/** Options of {@link createFileAuditTrail}. */
export interface FileAuditTrailOptions extends ContinuedVerificationOptions {
  /** Checkpoint signatures are checked with this key when given. */
  readonly publicKey?: CheckpointPublicKey;
}

/** Where a verification or a count of the file ended: the file, and its last line's bytes and place. */
interface FilePlace {
  readonly dev: number;
  readonly ino: number;
  /** Byte offset of the last line verified (or counted). */
  readonly start: number;
  /** Byte offset just past its newline: where the next line begins. */
  readonly end: number;
  /** Its bytes, newline included (empty for an empty log). */
  readonly line: Buffer;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/**
 * Whether the line `bytes` is still in the file at `start`, a whole line: after a newline unless it is the
 * first (read with one `pread`).
 */
async function holdsLine(path: string, start: number, bytes: Buffer): Promise<boolean> {
  if (bytes.length === 0) return true;
  const handle = await open(path, "r");
  try {
    const from = start === 0 ? 0 : start - 1;
    const found = Buffer.alloc(start - from + bytes.length);
    const { bytesRead } = await handle.read(found, 0, found.length, from);
    return (
      bytesRead === found.length && (start === 0 || found[0] === 0x0a) && found.subarray(start - from).equals(bytes)
    );
  } finally {
    await handle.close();
  }
}

/**
 * Whether the file at `path` still begins with what was read up to `at`: the same file (device and
 * inode), not shorter, and its last line read still at its place, a whole line. A file rewritten,
 * replaced or cut fails this; an old line edited in place without changing its length or the last line
 * does not.
 */
async function holdsPlace(path: string, at: FilePlace): Promise<boolean> {
  try {
    const file = await stat(path);
    if (file.dev !== at.dev || file.ino !== at.ino || file.size < at.end) return false;
    return await holdsLine(path, at.start, at.line);
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** The bytes of `path` from `start` to `end` (shorter when the file is). */
async function readBytes(path: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const bytes = Buffer.alloc(end - start);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start);
    return bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The JSONL log as a {@link ChainSource}: read line by line, continued from a byte offset. */
function fileChain(path: string, publicKey: CheckpointPublicKey | undefined): ChainSource<FilePlace> {
  const optionsNow = (): VerifyAuditOptions => {
    const anchor = readAnchor(path);
    return { ...(publicKey !== undefined ? { publicKey } : {}), ...(anchor !== undefined ? { anchor } : {}) };
  };
  /**
   * Without an anchor while the log's marker says it had one (deleted, perhaps with the log cut back), the
   * verification fails `anchor_missing` as `acp audit verify` fails it; `null` otherwise.
   */
  const anchorGone = (options: VerifyAuditOptions, verification: AuditVerification): AuditVerification | null =>
    options.anchor === undefined && hasAnchoredMarker(path)
      ? failForMissingAnchor(
          verification,
          `\`${path}.checkpoint\` is missing, though \`${anchoredMarkerPathOf(path)}\` records that the log had one`,
        )
      : null;
  return {
    async verify(from): Promise<SourceVerification<FilePlace>> {
      const options = optionsNow();
      let file;
      try {
        file = await stat(path);
      } catch (err) {
        if (isMissing(err)) {
          const empty = verifyAuditChain([], options);
          return { verification: anchorGone(options, empty) ?? empty };
        }
        throw err;
      }
      const resume = from === undefined ? {} : { from: from.verification, start: from.at.end };
      const { verification, progress } = await verifyAuditFile(path, { ...options, ...resume });
      // (not a place to continue from: the marker is looked at again next time)
      const gone = anchorGone(options, verification);
      if (gone !== null) return { verification: gone };
      if (!verification.ok || progress.unterminated) return { verification };
      const same = { dev: file.dev, ino: file.ino };
      if (progress.lines === 0) {
        return { verification, at: from?.at ?? { ...same, start: 0, end: 0, line: Buffer.alloc(0) } };
      }
      const line = Buffer.from(`${progress.lastLine}\n`, "utf8");
      return { verification, at: { ...same, start: progress.lastStart, end: progress.end, line } };
    },
    async holds({ verification, at }): Promise<boolean> {
      return (await holdsPlace(path, at)) && canContinueAuditVerification(verification, optionsNow());
    },
  };
}

/** A count of the file's lines, and where its newline-terminated lines end (with the last one's bytes). */
interface CountedPlace extends FilePlace {
  /** The newline-terminated lines up to `end`. */
  readonly lines: number;
}

/** A last line longer than this is not remembered: the next count reads the whole file (audit lines are shorter). */
const MAX_REMEMBERED_LINE = 1024 * 1024;

/**
 * Counts the file's lines as {@link countAuditFileLines} does, continued: after a count it remembers where
 * the file's newline-terminated lines ended and the last one's bytes (when it is an audit event); the next
 * count reads only the bytes after them, once the file is found to still hold them ({@link holdsPlace},
 * the check the continued verification makes). A file rewritten, replaced or cut is counted whole, and so is any file once
 * `fullEveryMs` has passed since the last whole count (for an edit in place that check cannot see).
 * Concurrent counts each count; the last to end is remembered.
 */
function continuedLineCount(path: string, options: ContinuedVerificationOptions): () => Promise<AuditFileExtent> {
  const fullEveryMs = options.fullEveryMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  let counted: CountedPlace | null = null;
  let lastFull = Number.NEGATIVE_INFINITY;
  return async () => {
    const from = counted;
    let file;
    try {
      file = await stat(path);
    } catch (err) {
      if (!isMissing(err)) throw err;
      counted = null;
      return { lines: 0, size: 0 };
    }
    // the file's identity is taken before the check and the count: were it replaced while they run, the
    // place remembered names the old file, and the next count finds another one and counts whole
    const resume =
      from !== null &&
      file.dev === from.dev &&
      file.ino === from.ino &&
      now() - lastFull < fullEveryMs &&
      (await holdsPlace(path, from))
        ? { lines: from.lines, lastStart: from.start, end: from.end }
        : undefined;
    if (resume === undefined) lastFull = now();
    const count = await countAuditFileLines(path, undefined, resume);
    const { lines, lastStart, end } = count.terminated;
    if (from !== null && resume !== undefined && end === from.end) {
      counted = from;
    } else if (end - lastStart <= MAX_REMEMBERED_LINE) {
      const line = await readBytes(path, lastStart, end);
      // only an audit event is a landmark: its id, time and hash make it the line of one place in one log,
      // where a blank or garbage line would be found again at the same offset of another file
      const landmark = line.length === end - lastStart && parseAuditLine(line.toString("utf8", 0, line.length - 1)).ok;
      counted = landmark ? { dev: file.dev, ino: file.ino, start: lastStart, end, line, lines } : null;
    } else {
      counted = null;
    }
    return { lines: count.lines, size: count.size };
  };
}

function matches(event: AuditEventV02, query: AuditQuery, needle: string | null): boolean {
  if (query.eventType !== undefined && event.event_type !== query.eventType) return false;
  if (query.tool !== undefined && event.tool !== query.tool) return false;
  if (query.agent !== undefined && event.agent !== query.agent) return false;
  if (query.decision !== undefined && event.decision !== query.decision) return false;
  if (query.requestId !== undefined && event.request_id !== query.requestId) return false;
  return needle === null || JSON.stringify(event).toLowerCase().includes(needle);
}

/**
 * Reads the chain at `path` on each call (the file is the truth; other processes append). Verification
 * is continued: each call reads only the lines appended since the last one (see {@link continuedVerification}).
 */
export function createFileAuditTrail(
  path: string,
  options: FileAuditTrailOptions = {},
): AuditTrail & { readonly idle: () => Promise<void> } {
  const { publicKey, ...continued } = options;
  const verification = continuedVerification(fileChain(path, publicKey), continued);
  const countLines = continuedLineCount(path, continued);
  return {
    // the file's lines are counted (continued: only the bytes appended since the last page), then read
    // backwards from `before` until the page is full: one chunk and the page in memory, however long the log
    async list(query): Promise<AuditPage> {
      const extent = await countLines();
      const needle = query.q === undefined || query.q === "" ? null : query.q.toLowerCase();
      const events: AuditEntry[] = [];
      const first = Math.min(extent.lines, (query.before ?? extent.lines + 1) - 1);
      /** 0-based index of the next line to look at. */
      let index = first - 1;
      if (index >= 0 && events.length < query.limit) {
        for await (const { line, text } of readAuditFileLinesBackward(path, extent)) {
          if (line > first) continue;
          const parsed = parseAuditLine(text);
          if (parsed.ok && matches(parsed.value, query, needle)) events.push({ line, event: parsed.value });
          index = line - 2;
          if (events.length >= query.limit) break;
        }
      }
      const next = index >= 0 && events.length === query.limit ? index + 2 : null;
      return { events, total: extent.lines, next };
    },
    verify: verification.verify,
    idle: verification.idle,
  };
}
