import { open } from "node:fs/promises";
import { MAX_AUDIT_LINE_LENGTH } from "@acp/core";

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
 * Reads a JSONL audit log line by line (without newlines; a last line without a newline is yielded too),
 * holding one chunk and one line at a time: the same lines as `readFileSync(path, "utf8").split("\n")`
 * less the empty string after a final newline (a line is decoded from its own bytes; a newline byte
 * never occurs inside a UTF-8 sequence). A line longer than the verifier reads (more than 3 MiB) is not
 * held: it is yielded as a stand-in of {@link MAX_AUDIT_LINE_LENGTH} + 1 characters, which the verifier
 * refuses as it would the line (`not_json`, line too long). Rejects when the file cannot be read (a
 * missing file with `ENOENT`); the file is closed when the iteration ends or stops.
 */
export function readAuditFileLines(path: string, options: ReadAuditFileOptions = {}): AuditFileLines {
  const start = Math.max(0, Math.floor(options.start ?? 0));
  const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? 256 * 1024));
  const progress: AuditFileProgress = { lines: 0, lastStart: start, end: start, unterminated: false, lastLine: "" };
  async function* batches(): AsyncGenerator<string[]> {
    const handle = await open(path, "r");
    try {
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
        return parts.length === 0 ? tail.toString("utf8") : Buffer.concat([...parts, tail]).toString("utf8");
      };
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
        if (bytesRead === 0) break;
        let from = 0;
        const batch: string[] = [];
        for (let nl = chunk.indexOf(NEWLINE, 0); nl !== -1 && nl < bytesRead; nl = chunk.indexOf(NEWLINE, from)) {
          const text = parts.length === 0 ? chunk.toString("utf8", from, nl) : whole(chunk.subarray(from, nl));
          from = nl + 1;
          batch.push(take(text, position + from, true));
        }
        if (batch.length > 0) yield batch;
        // the rest of the chunk begins a line that goes on in the next one (kept unless already too long)
        if (from < bytesRead && partBytes <= MAX_LINE_BYTES) parts.push(Buffer.from(chunk.subarray(from, bytesRead)));
        partBytes += bytesRead - from;
        position += bytesRead;
      }
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
