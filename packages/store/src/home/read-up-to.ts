import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 64 * 1024;

/**
 * Reads a file of at most `maxBytes` bytes: its bytes, or `undefined` when it holds more. Never reads more
 * than `maxBytes + 1` bytes, so a file that is not what it should be — `/dev/zero`, a pipe that never
 * ends, a 2 GB file where a key or an anchor belongs — costs no more memory than the largest file accepted
 * (`readFileSync` then a size check read all of it first: a key file naming `/dev/zero` filled memory).
 * Throws as `readFileSync` does (`ENOENT`, `EISDIR`, `EACCES`, …).
 */
export function readFileUpTo(path: string, maxBytes: number): Buffer | undefined {
  const fd = openSync(path, "r");
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > maxBytes) return undefined;
    const chunks: Buffer[] = [];
    let total = 0;
    while (total <= maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
    }
    return total > maxBytes ? undefined : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
