import { randomFillSync } from "node:crypto";

/** Random bytes for ids, drawn 512 ids at a time (8 bytes each; each byte used once). */
const ID_POOL = Buffer.alloc(8 * 512);
let idsUsed = ID_POOL.length;

/** A short random id with a prefix (`session_3f9a…`, `call_…`): 8 random bytes as hex. */
export function newId(prefix: string): string {
  if (idsUsed === ID_POOL.length) {
    randomFillSync(ID_POOL);
    idsUsed = 0;
  }
  const hex = ID_POOL.toString("hex", idsUsed, idsUsed + 8);
  idsUsed += 8;
  return `${prefix}_${hex}`;
}
