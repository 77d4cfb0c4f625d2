import { createHash } from "node:crypto";
import { fstatSync, readSync } from "node:fs";
import { computeEventHash, isSha256Ref } from "@acp/core";
import { AuditLogError } from "./audit-log-error.js";

/** Where the chain stands at the end of the log's last complete line. */
export interface ChainPosition {
  /** Bytes up to and including the last newline. */
  readonly size: number;
  /** Complete lines. */
  readonly count: number;
  /** `event_hash` of the last line; `null` for an empty log. */
  readonly head: string | null;
  /** Lines since the last checkpoint line (all lines when there is none). */
  readonly sinceCheckpoint: number;
}

/** Where the bytes after a log's last newline lie: a torn (interrupted) write. */
export interface TornBytes {
  /** Byte offset of the first of them (the log's size up to its last newline). */
  readonly start: number;
  readonly bytes: number;
}

/** What a scan found past a position. */
export interface ScanResult {
  readonly position: ChainPosition;
  /** The bytes after the last newline (a torn, interrupted write), or `null`: where they are, not held. */
  readonly torn: TornBytes | null;
  /** Where the line asked for (`find`) lies, without its newline, when this scan read it whole. */
  readonly found?: { readonly start: number; readonly end: number };
}

/** The start of an empty log. */
export const EMPTY_POSITION: ChainPosition = { size: 0, count: 0, head: null, sinceCheckpoint: 0 };

const CHUNK = 1024 * 1024;
/**
 * Most bytes of a line a scan holds: more than any line ACP writes (an event is fitted under 1 MiB
 * characters, at most 3 MiB of UTF-8). A longer one is not held on: it cannot be an intact event, and a
 * tail of gigabytes without a newline (a sparse file, a writer that never ends its line) would otherwise
 * be held whole and copied again with every chunk.
 */
const MAX_HELD_LINE = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
/**
 * A top-level `"event_type":"checkpoint"` member, as canonical lines hold it; inside a string its quotes
 * are escaped, so a line without it is no checkpoint (a line with it is parsed to be sure).
 */
export const CHECKPOINT_MARKER_TEXT = '"event_type":"checkpoint"';
const CHECKPOINT_MARKER = Buffer.from(CHECKPOINT_MARKER_TEXT);

/** `,"event_hash":"sha256:`: where the hash member of a canonical line starts. */
const HASH_MEMBER_KEY = Buffer.from(',"event_hash":"sha256:', "latin1");
const QUOTE = 0x22;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The `event_hash` of a line in canonical form, read from its bytes: the line less its `event_hash`
 * member is then the canonical JSON the hash covers (RFC 8785 sorts the keys, so the member sits between
 * `decision` and `event_type`; a `"` inside a string is escaped, so the member's bytes cannot occur in a
 * value), and it must hash to the stated value. `undefined` when there is no such member or the bytes do
 * not hash to it: a line written in another form, or damaged, which the caller checks the long way.
 */
export function hashOfCanonicalLine(line: Uint8Array): string | undefined {
  const bytes = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
  const at = bytes.indexOf(HASH_MEMBER_KEY);
  if (at < 0) return undefined;
  const hexStart = at + HASH_MEMBER_KEY.length;
  const hexEnd = hexStart + 64;
  if (hexEnd >= bytes.length || bytes[hexEnd] !== QUOTE) return undefined;
  const hex = bytes.toString("latin1", hexStart, hexEnd);
  if (!HEX64.test(hex) || bytes.indexOf(HASH_MEMBER_KEY, hexEnd) !== -1) return undefined;
  const digest = createHash("sha256")
    .update(bytes.subarray(0, at))
    .update(bytes.subarray(hexEnd + 1))
    .digest("hex");
  return digest === hex ? `sha256:${hex}` : undefined;
}

/**
 * Reads the head hash out of the last complete line, refusing a line that does not hash to itself. A
 * line as ACP writes it (canonical) is checked on its bytes ({@link hashOfCanonicalLine}, one SHA-256);
 * any other is parsed, canonicalized and hashed, and refused if that does not give its `event_hash`.
 */
function headOf(line: Buffer | "too long", lineNumber: number, path: string): string {
  const fast = line === "too long" ? undefined : hashOfCanonicalLine(line);
  if (fast !== undefined) return fast;
  let event: unknown;
  try {
    event = line === "too long" ? undefined : JSON.parse(line.toString("utf8"));
  } catch {
    event = undefined;
  }
  const hash = (event as { event_hash?: unknown } | undefined)?.event_hash;
  let computed: string | undefined;
  try {
    computed = isSha256Ref(hash) ? computeEventHash(event as Parameters<typeof computeEventHash>[0]) : undefined;
  } catch {
    computed = undefined;
  }
  if (computed === undefined || computed !== hash) {
    throw new AuditLogError(
      { code: "audit_log_corrupt" },
      `${path}:${lineNumber}: last line is not an intact audit event; refusing to extend the chain (run \`acp audit verify\`)`,
    );
  }
  return hash;
}

/**
 * Reads the log from `from.size` to its end in 1 MiB chunks: counts lines, tracks lines since the last
 * checkpoint, takes the head hash from the last complete line (which must hash to itself), and says where
 * any bytes after the last newline (a torn write) lie. Memory stays bounded by the chunk and
 * {@link MAX_HELD_LINE}, whatever the file holds. With `find` (a 1-based line number), also says where
 * that line lies, when it ends within the bytes read.
 */
export function scanAuditLog(fd: number, from: ChainPosition, path: string, find?: number): ScanResult {
  const end = fstatSync(fd).size;
  if (end < from.size) {
    throw new AuditLogError({ code: "audit_log_shrunk" }, `${path}: the log shrank from ${from.size} to ${end} bytes`);
  }
  let { count, sinceCheckpoint } = from;
  /** The bytes of the line in progress, unless it grew past {@link MAX_HELD_LINE} (`long`). */
  let carry = Buffer.alloc(0);
  let long = false;
  /** Where the line in progress starts: the size up to the last newline. */
  let lineStart = from.size;
  let last: Buffer | "too long" | undefined;
  let found: ScanResult["found"];
  for (let offset = from.size; offset < end;) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - offset));
    const read = readSync(fd, chunk, 0, chunk.length, offset);
    if (read === 0) break;
    const dataStart = offset - carry.length;
    offset += read;
    const data = carry.length === 0 ? chunk.subarray(0, read) : Buffer.concat([carry, chunk.subarray(0, read)]);
    let start = 0;
    let lastStart = -1;
    // the next checkpoint marker at or after `start`, searched once per marker (not once per line);
    // it holds no newline, so it lies inside the line where it is found
    let marker = data.indexOf(CHECKPOINT_MARKER, start);
    for (let nl = data.indexOf(NEWLINE, start); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      count++;
      if (count === find) found = { start: dataStart + start, end: dataStart + nl };
      if (marker !== -1 && marker < nl) {
        sinceCheckpoint = 0;
        marker = data.indexOf(CHECKPOINT_MARKER, nl + 1);
      } else sinceCheckpoint++;
      lastStart = start;
      start = nl + 1;
    }
    if (lastStart !== -1) {
      // the first line of `data` is the rest of a line not held when it grew too long
      last = lastStart === 0 && long ? "too long" : Buffer.from(data.subarray(lastStart, start - 1));
      long = false;
      lineStart = dataStart + start;
    }
    long ||= data.length - start > MAX_HELD_LINE;
    carry = long ? Buffer.alloc(0) : Buffer.from(data.subarray(start));
  }
  const head = last === undefined ? from.head : headOf(last, count, path);
  return {
    position: { size: lineStart, count, head, sinceCheckpoint },
    torn: lineStart < end ? { start: lineStart, bytes: end - lineStart } : null,
    ...(found === undefined ? {} : { found }),
  };
}
