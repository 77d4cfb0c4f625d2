import { isUtf8 } from "node:buffer";
import { open } from "node:fs/promises";
import { MAX_AUDIT_LINE_LENGTH, NOT_UTF8_AUDIT_LINE } from "@acp/core";

/** Options of {@link readAuditFileLines}. */
export interface ReadAuditFileOptions {
  /** Byte offset to start at: the start of a line (default 0). */
  readonly start?: number;
  /** Bytes per read (default 256 KiB). */
  readonly chunkBytes?: number;
}

/** How far a {@link readAuditFileLines} reader got: updated as each chunk is read, for all its lines at once. */
export interface AuditFileProgress {
  /** Lines yielded. */
  lines: number;
  /** Byte offset of the start of the last line yielded. */
  lastStart: number;
  /** Byte offset just past the last line yielded (past its newline, when it has one). */
  end: number;
  /** Whether the last line yielded had no newline: the file's last bytes (an interrupted write). */
  unterminated: boolean;
  /** The last line yielded ("" before the first): where a verification ended, to check it is still there. */
  lastLine: string;
}

/** An audit file's lines, read as they are iterated; `progress` says how far. */
export interface AuditFileLines extends AsyncIterable<string> {
  readonly progress: AuditFileProgress;
  /** The same lines, as the lines each read completed (one array per chunk, empty arrays left out). */
  readonly batches: () => AsyncIterable<string[]>;
}

const NEWLINE = 0x0a;
/**
 * A line of more bytes than this has more than {@link MAX_AUDIT_LINE_LENGTH} UTF-16 units (one unit takes
 * at most 3 bytes of UTF-8, an invalid byte decodes to one unit), so the verifier refuses it whatever it
 * holds: it is not buffered further.
 */
const MAX_LINE_BYTES = 3 * MAX_AUDIT_LINE_LENGTH;
let overlong: string | undefined;

/**
 * A line's text decoded from its bytes, or {@link NOT_UTF8_AUDIT_LINE} when the bytes are not valid UTF-8:
 * the decoder puts U+FFFD for an invalid sequence, so another byte string would decode (and hash) alike.
 * Only a line holding U+FFFD needs the check.
 */
function checkedUtf8(text: string, bytes: Buffer, start = 0, end = bytes.length): string {
  return text.includes("\uFFFD") && !isUtf8(bytes.subarray(start, end)) ? NOT_UTF8_AUDIT_LINE : text;
}

/**
 * Reads a JSONL audit log line by line (without newlines; a last line without a newline is yielded too),
 * holding one chunk and one line at a time: the same lines as `readFileSync(path, "utf8").split("\n")`
 * less the empty string after a final newline (a line is decoded from its own bytes; a newline byte
 * never occurs inside a UTF-8 sequence), but a line whose bytes are not valid UTF-8 is yielded as
 * {@link NOT_UTF8_AUDIT_LINE}, which the verifier refuses. A line longer than the verifier reads (more
 * than 3 MiB) is not held: it is yielded as a stand-in of {@link MAX_AUDIT_LINE_LENGTH} + 1 characters,
 * which the verifier refuses as it would the line (`not_json`, line too long), as soon as it is that long
 * (a verification stops there: a file without newlines, `/dev/zero`, is not read to its end). A file that is not a
 * regular file (a pipe) is read in order from where it stands, from `start` 0 only. Rejects when the file cannot be
 * read (a missing file with `ENOENT`); the file is closed when the iteration ends or stops.
 */
export function readAuditFileLines(path: string, options: ReadAuditFileOptions = {}): AuditFileLines {
  const start = Math.max(0, Math.floor(options.start ?? 0));
  const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? 256 * 1024));
  const progress: AuditFileProgress = { lines: 0, lastStart: start, end: start, unterminated: false, lastLine: "" };
  async function* batches(): AsyncGenerator<string[]> {
    const handle = await open(path, "r");
    try {
      // a pipe (`acp audit verify /dev/stdin`, `<(…)`) is read in order: a read at a position fails there (ESPIPE)
      const inOrder = start === 0 && !(await handle.stat()).isFile();
      const chunk = Buffer.allocUnsafe(chunkBytes);
      let parts: Buffer[] = [];
      let partBytes = 0;
      let position = start;
      let lineStart = start;
      const take = (text: string, next: number, terminated: boolean): string => {
        progress.lines++;
        progress.lastStart = lineStart;
        progress.end = next;
        progress.unterminated = !terminated;
        progress.lastLine = text;
        lineStart = next;
        parts = [];
        partBytes = 0;
        return text;
      };
      const whole = (tail: Buffer): string => {
        if (partBytes + tail.length > MAX_LINE_BYTES) return (overlong ??= "x".repeat(MAX_AUDIT_LINE_LENGTH + 1));
        const bytes = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
        return checkedUtf8(bytes.toString("utf8"), bytes);
      };
      /** Whether the bytes at `position` are the rest of a line already given (as too long). */
      let skipping = false;
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunkBytes, inOrder ? null : position);
        if (bytesRead === 0) break;
        let from = 0;
        const batch: string[] = [];
        for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = chunk.indexOf(NEWLINE, from)) {
          if (skipping) {
            // the newline of the line given as too long: now its end is known
            skipping = false;
            from = nl + 1;
            lineStart = progress.end = position + from;
            continue;
          }
          const text =
            parts.length === 0
              ? checkedUtf8(chunk.toString("utf8", from, nl), chunk, from, nl)
              : whole(chunk.subarray(from, nl));
          from = nl + 1;
          batch.push(take(text, position + from, true));
        }
        if (batch.length > 0) yield batch;
        position += bytesRead;
        if (skipping) continue;
        // the rest of the chunk begins a line that goes on in the next one (kept unless already too long)
        if (from < bytesRead && partBytes <= MAX_LINE_BYTES) parts.push(Buffer.from(chunk.subarray(from, bytesRead)));
        partBytes += bytesRead - from;
        if (partBytes > MAX_LINE_BYTES) {
          // a line longer than the verifier reads is given at once, not when (if ever) its newline comes, and
          // its rest is skipped: a file without newlines (`/dev/zero`, a sparse file) is not read on for nothing
          // (whether it has a newline is not known yet: it is not called unterminated unless the file ends first)
          yield [take((overlong ??= "x".repeat(MAX_AUDIT_LINE_LENGTH + 1)), position, true)];
          skipping = true;
        }
      }
      if (skipping) progress.unterminated = true;
      if (partBytes > 0) yield [take(whole(Buffer.alloc(0)), position, false)];
    } finally {
      await handle.close();
    }
  }
  async function* lines(): AsyncGenerator<string> {
    for await (const batch of batches()) yield* batch;
  }
  return { progress, batches, [Symbol.asyncIterator]: () => lines() };
}

/** A line read by {@link readAuditFileLinesBackward}, with its 1-based number. */
export interface NumberedAuditLine {
  readonly line: number;
  readonly text: string;
  /**
   * Set on a line longer than {@link ReadBackwardOptions.maxLineBytes}: reading stopped there (inside it, when
   * its start was not found within that many bytes of its end). `text` is the stand-in longer than any audit line,
   * `end` the byte offset just past its last byte; it is the last line given (those before it are not read).
   */
  readonly oversized?: { readonly end: number };
}

/** A line longer than {@link ReadBackwardOptions.maxLineBytes}, ending at byte `end`: the stand-in, flagged. */
function oversizedLine(line: number, end: number): NumberedAuditLine {
  return { line, text: (overlong ??= "x".repeat(MAX_AUDIT_LINE_LENGTH + 1)), oversized: { end } };
}

/** Options of {@link readAuditFileLinesBackward}. */
export interface ReadBackwardOptions {
  /**
   * Most bytes of one line: a longer line is given as `oversized` and reading stops there (its start is not
   * looked for further back), so a hostile line (hundreds of megabytes without a newline) costs
   * about this many bytes of reading, not its length. Default: no bound (the line is read through, held
   * only up to the verifier's length, and the lines before it are given).
   */
  readonly maxLineBytes?: number;
}

/** An audit file's extent when it was counted: its lines and bytes. */
export interface AuditFileExtent {
  /** Lines, as `readFileSync(path, "utf8").split("\n")` less the empty string after a final newline. */
  readonly lines: number;
  /** Bytes counted. */
  readonly size: number;
}

/** The newline-terminated lines at the start of an audit file, as a count found them: where to continue it. */
export interface AuditFileCountedLines {
  /** How many (the file's newlines up to `end`). */
  readonly lines: number;
  /** Byte offset of the start of the last of them (0 when none). */
  readonly lastStart: number;
  /** Byte offset just past its newline, where the next line begins (0 when none). */
  readonly end: number;
}

/** A {@link countAuditFileLines} count: the file's extent, and where its terminated lines end. */
export interface AuditFileCount extends AuditFileExtent {
  /** The lines that end with a newline (a last line without one, an interrupted write, may still grow). */
  readonly terminated: AuditFileCountedLines;
}

const NOTHING_COUNTED: AuditFileCountedLines = { lines: 0, lastStart: 0, end: 0 };

/**
 * Counts the lines of an audit file (none for a missing file), reading it in chunks: one chunk in memory.
 * With `from` (the `terminated` of an earlier count of the same file) only the bytes after `from.end` are
 * read and counted on top of `from.lines`: the same count as a whole one, as long as the file's first
 * `from.end` bytes are still the ones counted (the caller checks that).
 */
export async function countAuditFileLines(
  path: string,
  chunkBytes = 256 * 1024,
  from: AuditFileCountedLines = NOTHING_COUNTED,
): Promise<AuditFileCount> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { lines: 0, size: 0, terminated: NOTHING_COUNTED };
    throw err;
  }
  try {
    const chunk = Buffer.allocUnsafe(Math.max(1, chunkBytes));
    let count = from.lines;
    let last = NEWLINE;
    let position = from.end;
    /** Offsets of the last two newlines read (-1: none read yet). */
    let lastNewline = -1;
    let newlineBefore = -1;
    // the bytes the file holds now, not what a read may still give: a device (`/dev/zero`) never ends
    const size = (await handle.stat()).size;
    while (position < size) {
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - position), position);
      if (bytesRead === 0) break;
      for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = chunk.indexOf(NEWLINE, nl + 1)) {
        count++;
        newlineBefore = lastNewline;
        lastNewline = position + nl;
      }
      last = chunk[bytesRead - 1] as number;
      position += bytesRead;
    }
    const terminated =
      lastNewline === -1
        ? from
        : { lines: count, lastStart: newlineBefore === -1 ? from.end : newlineBefore + 1, end: lastNewline + 1 };
    return { lines: last === NEWLINE ? count : count + 1, size: position, terminated };
  } finally {
    await handle.close();
  }
}

/**
 * The lines of the first `extent.size` bytes of an audit file ({@link countAuditFileLines}: what was
 * counted, so lines appended since are not read and the numbers hold), from the last to the first, each
 * with its number, read backwards in chunks: one chunk and one line in memory, a line longer than the
 * verifier reads (more than 3 MiB) given as a stand-in as {@link readAuditFileLines} does. A missing file
 * has no lines. `extent.lines` may be more than the lines (not counted: counting reads the whole file): the
 * lines are then numbered down from it, and the first line is given all the same. With
 * `options.maxLineBytes`, a line longer than that ends the reading ({@link NumberedAuditLine.oversized}).
 */
export async function* readAuditFileLinesBackward(
  path: string,
  extent: AuditFileExtent,
  chunkBytes = 256 * 1024,
  options: ReadBackwardOptions = {},
): AsyncGenerator<NumberedAuditLine> {
  const bound = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
  let handle;
  try {
    handle = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    const size = Math.min(extent.size, (await handle.stat()).size);
    const chunk = Buffer.allocUnsafe(Math.max(1, chunkBytes));
    /** The bytes after the newline found last: the end of a line whose start is not read yet. */
    let tail = Buffer.alloc(0);
    let tailBytes = 0;
    let line = extent.lines;
    let atEnd = true;
    /** Byte offset just past the last byte of the line whose end was found last (its newline not counted). */
    let lineEnd = size;
    const decode = (bytes: Buffer, total: number): string =>
      total > MAX_LINE_BYTES ? (overlong ??= "x".repeat(MAX_AUDIT_LINE_LENGTH + 1)) : bytes.toString("utf8");
    let position = size;
    while (position > 0 && line > 0) {
      const from = Math.max(0, position - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, position - from, from);
      if (bytesRead === 0) break;
      position = from;
      let end = bytesRead;
      for (
        let nl = chunk.lastIndexOf(NEWLINE, end - 1);
        nl !== -1 && line > 0;
        nl = chunk.lastIndexOf(NEWLINE, nl - 1)
      ) {
        const total = end - (nl + 1) + tailBytes;
        const bytes =
          tailBytes === 0 ? chunk.subarray(nl + 1, end) : Buffer.concat([chunk.subarray(nl + 1, end), tail]);
        const ends = lineEnd;
        lineEnd = from + nl;
        end = nl;
        tail = Buffer.alloc(0);
        tailBytes = 0;
        // the empty piece after a final newline is not a line
        if (atEnd && total === 0) {
          atEnd = false;
          if (nl === 0) break;
          continue;
        }
        atEnd = false;
        if (total > bound) {
          yield oversizedLine(line, ends);
          return;
        }
        yield { line: line--, text: decode(bytes, total) };
        if (nl === 0) break;
      }
      if (end > 0 && line > 0) {
        atEnd = false;
        if (tailBytes + end <= MAX_LINE_BYTES) tail = Buffer.concat([chunk.subarray(0, end), tail]);
        tailBytes += end;
        // its start not found within the bound: not read on
        if (tailBytes > bound) {
          yield oversizedLine(line, lineEnd);
          return;
        }
      }
    }
    // the first line (empty too, when read to the start: with an exact count, that is when `line` is 1)
    if (line > 0 && (tailBytes > 0 || line === 1 || (position === 0 && !atEnd)))
      yield { line: line--, text: decode(tail, tailBytes) };
  } finally {
    await handle.close();
  }
}
