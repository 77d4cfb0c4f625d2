import { createHash, hash as oneShotHash } from "node:crypto";
import { SHA256_PREFIX } from "../canonical-json/index.js";
import { auditPartsOf } from "./audit-json.js";
import type { AuditEventInput } from "./event.js";

// The audit writer's batch path, in two steps.
//
// Staging (when an event is appended, outside the writer's lock): the event's canonical JSON, all but
// its previous hash and `event_hash`, is written once as UTF-8 into a large shared buffer (an arena),
// laid out so that sealing needs no string and no copy of the body:
//
//   [87 bytes scratch][front ……"previous_event_hash":]["sha256:<64 free>"][,"request_id":…}][\n]
//                      ^ head ends where event_hash goes
//
// Sealing (under the lock, when its place in the chain is known): the previous hash is written into
// its slot, the body (front + previous + back, RFC 8785 canonical JSON without `event_hash`) is hashed
// where it lies, then the head moves 87 bytes left and `,"event_hash":"sha256:<hex>"` fills the gap it
// leaves, where JCS puts that key. The line and its newline are then contiguous from the region start.
// Staged events hold numbers and a buffer reference, not strings: a queue of thousands of them gives
// the garbage collector nothing to trace or copy. A property test holds the sealed bytes equal to
// `serializeAuditEvent(sealAuditEvent(createAuditEventBody(…)))`.

/** `,"event_hash":"sha256:` */
const HASH_KEY = Buffer.from(`,"event_hash":"${SHA256_PREFIX}`, "latin1");
/** Bytes of the `event_hash` member: the key, 64 hex digits, the closing quote. */
const HASH_MEMBER = HASH_KEY.length + 64 + 1;
/** `"sha256:` */
const PREVIOUS_OPEN = `"${SHA256_PREFIX}`;
/** Bytes of the previous-hash slot: `"sha256:<64 hex>"`. */
const PREVIOUS_SLOT = PREVIOUS_OPEN.length + 64 + 1;
/** A previous hash of `null` takes 4 bytes of the slot. */
const NULL_SHRINK = PREVIOUS_SLOT - 4;
const HASH_REF_LENGTH = SHA256_PREFIX.length + 64;
const QUOTE = 0x22;

/** `Buffer`'s own encoders, which `buffer.write` wraps with argument juggling; that wrapper where they are missing. */
interface StringWriters {
  utf8Write(text: string, offset: number): number;
  latin1Write(text: string, offset: number): number;
}
const own = Buffer.prototype as unknown as Partial<StringWriters>;
const direct = typeof own.utf8Write === "function" && typeof own.latin1Write === "function";
const writeUtf8: (buffer: Buffer, text: string, offset: number) => number = direct
  ? (buffer, text, offset) => (buffer as unknown as StringWriters).utf8Write(text, offset)
  : (buffer, text, offset) => buffer.write(text, offset, "utf8");
const writeLatin1: (buffer: Buffer, text: string, offset: number) => number = direct
  ? (buffer, text, offset) => (buffer as unknown as StringWriters).latin1Write(text, offset)
  : (buffer, text, offset) => buffer.write(text, offset, "latin1");

const sha256HexOf: (bytes: Uint8Array) => string =
  typeof oneShotHash === "function"
    ? (bytes) => oneShotHash("sha256", bytes, "hex")
    : (bytes) => createHash("sha256").update(bytes).digest("hex");

/**
 * Staged lines, in order. Line `k` lies in `buffers[k]`; `offsets[4k..4k+3]` are its region start,
 * the end of its head (where `event_hash` goes, before sealing), the start of its previous-hash slot,
 * and the end of the region (after the newline). Once sealed, the line and its newline are the bytes
 * from `offsets[4k]` to `offsets[4k+3]`.
 */
export interface StagedAuditLines {
  readonly buffers: Buffer[];
  readonly offsets: number[];
}

/** An empty list of staged lines. */
export function createStagedAuditLines(): StagedAuditLines {
  return { buffers: [], offsets: [] };
}

/** Stages events into arenas of `arenaBytes` (default 4 MiB); a full arena is left to its lines and a new one taken. */
export class AuditLineStager {
  private arena: Buffer = Buffer.alloc(0);
  private cursor = 0;

  constructor(private readonly arenaBytes = 4 * 1024 * 1024) {}

  /**
   * Stages the event an input (redacted already) and its placement make, at the end of `into`. Throws
   * a TypeError on a value RFC 8785 refuses (non-finite number, lone surrogate, undefined, class
   * instance, nesting deeper than 128), as `canonicalJson` does; nothing is staged then.
   */
  stage(input: AuditEventInput, id: string, timestamp: string, into: StagedAuditLines): void {
    const { front, hashAt, back } = auditPartsOf(input, id, timestamp);
    const need = HASH_MEMBER + (front.length + back.length) * 3 + PREVIOUS_SLOT + 1;
    if (this.cursor + need > this.arena.length) {
      this.arena = Buffer.allocUnsafe(Math.max(this.arenaBytes, need));
      this.cursor = 0;
    }
    const arena = this.arena;
    const start = this.cursor;
    const slot = start + HASH_MEMBER + writeUtf8(arena, front, start + HASH_MEMBER) - PREVIOUS_OPEN.length;
    const end = slot + PREVIOUS_SLOT - 1 + writeUtf8(arena, back, slot + PREVIOUS_SLOT - 1);
    this.cursor = end;
    into.buffers.push(arena);
    into.offsets.push(start, start + HASH_MEMBER + hashAt, slot, end);
  }
}

/**
 * Seals staged line `k` in place, chained to `previousEventHash` (a `sha256:` reference, or `null` for
 * the first line of a log); returns its `event_hash`. Each line is sealed once.
 */
export function sealStagedLine(lines: StagedAuditLines, k: number, previousEventHash: string | null): string {
  const buffer = lines.buffers[k] as Buffer;
  const offsets = lines.offsets;
  const o = 4 * k;
  const start = offsets[o] as number;
  const headEnd = offsets[o + 1] as number;
  const slot = offsets[o + 2] as number;
  let end = offsets[o + 3] as number;
  if (previousEventHash === null) {
    writeLatin1(buffer, "null", slot);
    buffer.copyWithin(slot + 4, slot + PREVIOUS_SLOT, end);
    end -= NULL_SHRINK;
    offsets[o + 3] = end;
  } else if (previousEventHash === lastRef) {
    writeLatin1(buffer, lastHex, slot + PREVIOUS_OPEN.length); // the usual case: the line sealed just before
  } else {
    if (previousEventHash.length !== HASH_REF_LENGTH)
      throw new TypeError("previous event hash is not a sha256 reference");
    writeLatin1(buffer, previousEventHash, slot + 1);
  }
  const body = start + HASH_MEMBER;
  const hex = sha256HexOf(new Uint8Array(buffer.buffer, buffer.byteOffset + body, end - 1 - body));
  buffer.copyWithin(start, start + HASH_MEMBER, headEnd);
  const at = headEnd - HASH_MEMBER;
  buffer.set(HASH_KEY, at);
  writeLatin1(buffer, hex, at + HASH_KEY.length);
  buffer[at + HASH_MEMBER - 1] = QUOTE;
  lastHex = hex;
  lastRef = SHA256_PREFIX + hex;
  return lastRef;
}

/** The hash {@link sealStagedLine} returned last, and its hex digits (written without re-reading the reference). */
let lastRef = "";
let lastHex = "";
