import { randomFillSync, randomUUID } from "node:crypto";
import type { AuditIdBytes } from "@acp/core";

const HEX = Buffer.from("0123456789abcdef", "latin1");
/** `ae_` and a UUID: 3 + 36 characters. */
const ID_LENGTH = 39;
/** Random bytes drawn at once: 16 per id. */
const POOL_BYTES = 16 * 256;
/** `ae_` and the dashes of a UUID; the hex digits are filled in. */
const TEMPLATE = Buffer.from("ae_xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", "latin1");

/** Where the 16 bytes of a UUID go in its 36 characters (dashes after bytes 4, 6, 8 and 10). */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * Event ids `ae_<random UUID v4>` (RFC 9562 layout: version 4, variant 10) written as bytes, straight
 * from a pool of random bytes refilled 256 ids at a time; `null` where `randomFillSync` is missing.
 */
export function createEventIdBytes(): AuditIdBytes | null {
  if (typeof randomFillSync !== "function") return null;
  const pool = Buffer.allocUnsafe(POOL_BYTES);
  let used = POOL_BYTES;
  return {
    length: ID_LENGTH,
    writeNext(into: Uint8Array, at: number): void {
      if (used === POOL_BYTES) {
        randomFillSync(pool);
        used = 0;
      }
      into.set(TEMPLATE, at);
      for (let i = 0; i < 16; i++) {
        let byte = pool[used + i] as number;
        if (i === 6) byte = (byte & 0x0f) | 0x40;
        else if (i === 8) byte = (byte & 0x3f) | 0x80;
        const to = at + 3 + (AT[i] as number);
        into[to] = HEX[byte >> 4] as number;
        into[to + 1] = HEX[byte & 0x0f] as number;
      }
      used += 16;
    },
  };
}

/**
 * Event ids as strings: {@link createEventIdBytes} read back as one string per id, where
 * `ae_${randomUUID()}` makes several. With `randomId` given, `ae_${randomId()}` as before.
 */
export function createEventIds(randomId?: () => string): () => string {
  if (randomId !== undefined) return () => `ae_${randomId()}`;
  const bytes = createEventIdBytes();
  if (bytes === null) return () => `ae_${randomUUID()}`;
  const text = Buffer.alloc(ID_LENGTH);
  return () => {
    bytes.writeNext(text, 0);
    return text.toString("latin1", 0, ID_LENGTH);
  };
}
