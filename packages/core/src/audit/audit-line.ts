import { createHash, hash as oneShotHash } from "node:crypto";
import { SHA256_PREFIX } from "../canonical-json/index.js";
import {
  ARENA_FULL,
  JsonBytes,
  writeAuditBody,
  writeLatin1,
  type AuditBodyPlaces,
  type AuditIdBytes,
} from "./audit-bytes.js";
import type { AuditEventInput } from "./event.js";
import { fitAuditInput } from "./fit-input.js";
import { MAX_AUDIT_LINE_LENGTH } from "./parse-event.js";

// The audit writer's batch path, in two steps.
//
// Staging (when an event is appended, outside the writer's lock): the event's canonical JSON, all but
// its previous hash and `event_hash`, is written once as UTF-8 into a large shared buffer (an arena),
// piece by piece where it goes (`audit-bytes.ts`), laid out so that sealing needs no string and no
// copy of the body:
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
/** A line is begun in a fresh arena when less than this is left (most lines are far shorter), at most the arena size. */
const MIN_ROOM = 4096;

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
  private readonly out = new JsonBytes();
  private readonly places: AuditBodyPlaces = { headEnd: 0, slot: 0, id: 0 };

  /** A line is begun in a fresh arena when less than this is left. */
  private readonly minRoom: number;

  constructor(private readonly arenaBytes = 4 * 1024 * 1024) {
    this.minRoom = Math.min(MIN_ROOM, arenaBytes);
  }

  /**
   * Stages the event an input (redacted already) and its placement make, at the end of `into`; `id`
   * is the id, or a source whose next id is written in place (one id taken per attempt). Throws
   * a TypeError on a value RFC 8785 refuses (non-finite number, lone surrogate, undefined, class
   * instance, nesting deeper than 128), as `canonicalJson` does; nothing is staged then.
   *
   * Returns the input staged: `input` itself, or, when its line would be longer than the verifier reads
   * ({@link MAX_AUDIT_LINE_LENGTH}), the {@link fitAuditInput} of it (its longest strings replaced by their
   * length and digest), so that every line written can be verified.
   */
  stage(input: AuditEventInput, id: string | AuditIdBytes, timestamp: string, into: StagedAuditLines): AuditEventInput {
    this.stageAsIs(input, id, timestamp, into);
    if (!this.unstageIfTooLong(into)) return input;
    // too long to verify: staged again, fitted (a source gives a fresh id)
    const fitted = fitAuditInput(input);
    this.stageAsIs(fitted, id, timestamp, into);
    if (this.unstageIfTooLong(into)) {
      throw new RangeError(
        `audit: an event longer than ${MAX_AUDIT_LINE_LENGTH} characters even with its long values omitted`,
      );
    }
    return fitted;
  }

  /**
   * Takes back the line staged last (the last one in the current arena) when it is too long to verify
   * (its characters with the newline, so at least one more than the line the verifier reads).
   */
  private unstageIfTooLong(into: StagedAuditLines): boolean {
    const k = into.offsets.length - 4;
    const start = into.offsets[k] as number;
    const end = into.offsets[k + 3] as number;
    // the verifier counts characters (UTF-16 units), never more than the UTF-8 bytes: most lines stop here
    if (end - start <= MAX_AUDIT_LINE_LENGTH) return false;
    const characters = HASH_MEMBER + (into.buffers[k / 4] as Buffer).toString("utf8", start + HASH_MEMBER, end).length;
    if (characters <= MAX_AUDIT_LINE_LENGTH) return false;
    into.buffers.pop();
    into.offsets.length = k;
    this.out.pos = start;
    return true;
  }

  private stageAsIs(
    input: AuditEventInput,
    id: string | AuditIdBytes,
    timestamp: string,
    into: StagedAuditLines,
  ): void {
    const out = this.out;
    const places = this.places;
    if (out.end - out.pos < this.minRoom) this.newArena(this.arenaBytes);
    for (;;) {
      const start = out.pos;
      try {
        out.pos = start + HASH_MEMBER;
        writeAuditBody(out, input, id, timestamp, places);
      } catch (err) {
        out.pos = start;
        if (err !== ARENA_FULL) throw err;
        // a line begun at the start of an arena that still does not fit gets an arena twice as large
        this.newArena(start === 0 ? 2 * out.buf.length : Math.max(this.arenaBytes, out.buf.length));
        continue;
      }
      into.buffers.push(out.buf);
      into.offsets.push(start, places.headEnd, places.slot, out.pos);
      return;
    }
  }

  /**
   * The id of the line staged last, as a string, when it was written from a source of id bytes (the
   * writer's `append`, which needs the id for the event it resolves with): read back from the line
   * instead of made as a string and then written.
   */
  stagedId(ids: AuditIdBytes): string {
    const at = this.places.id + 1;
    return this.out.buf.toString("latin1", at, at + ids.length);
  }

  private newArena(bytes: number): void {
    const out = this.out;
    out.buf = Buffer.allocUnsafe(Math.max(bytes, HASH_MEMBER));
    out.pos = 0;
    out.end = out.buf.length;
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
    // the usual case: the line sealed just before, whose hex digits are still where they were written
    if (buffer === lastBuffer) buffer.copyWithin(slot + PREVIOUS_OPEN.length, lastHexAt, lastHexAt + 64);
    else writeLatin1(buffer, lastHex, slot + PREVIOUS_OPEN.length);
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
  lastBuffer = buffer;
  lastHexAt = at + HASH_KEY.length;
  return lastRef;
}

/**
 * Undoes {@link sealStagedLine} on line `k`: the head moves back, the previous-hash slot is opened again
 * (and the rest moved back when it was sealed to `null`), so the line can be sealed anew, to another
 * previous hash. The writer seals the next batch while the current one's fsync is in flight, assuming
 * no other process appends in between; when one did, it unseals the batch and seals it again.
 */
export function unsealStagedLine(lines: StagedAuditLines, k: number): void {
  const buffer = lines.buffers[k] as Buffer;
  const offsets = lines.offsets;
  const o = 4 * k;
  const start = offsets[o] as number;
  const headEnd = offsets[o + 1] as number;
  const slot = offsets[o + 2] as number;
  const end = offsets[o + 3] as number;
  buffer.copyWithin(start + HASH_MEMBER, start, headEnd - HASH_MEMBER);
  if (buffer[slot] !== QUOTE) {
    // sealed to null: "null" where `"sha256:<64>"` was, the rest moved left
    buffer.copyWithin(slot + PREVIOUS_SLOT, slot + 4, end);
    offsets[o + 3] = end + NULL_SHRINK;
    writeLatin1(buffer, PREVIOUS_OPEN, slot);
    buffer[slot + PREVIOUS_SLOT - 1] = QUOTE;
  }
  // the hex digits the next line would copy may have been overwritten
  lastRef = "";
  lastBuffer = null;
}

/**
 * The hash {@link sealStagedLine} returned last, its hex digits, and where it wrote them: a sealed
 * line's bytes are not touched again (lines are staged one after another and sealed once), so the
 * next line in the same arena copies them from there.
 */
let lastRef = "";
let lastHex = "";
let lastBuffer: Buffer | null = null;
let lastHexAt = 0;
