import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { FileNotOwnedError } from "./owner.js";

const CHUNK_BYTES = 64 * 1024;

/** Options of {@link readFileUpTo}. */
export interface ReadUpToOptions {
  /**
   * Refuse anything but a regular file (a directory still fails as reading it does, `EISDIR`): for the
   * files a home keeps. A pipe is then not waited on, even at open (a FIFO with no writer blocks an
   * `open` for ever, and with it a whole process such as `acp serve`).
   */
  readonly regularOnly?: boolean;
  /**
   * Refuse a file whose mode has any of these bits: {@link OWNER_ONLY} (0077: readable or writable by group
   * or others, as ssh refuses such a private key) or {@link NOT_WRITABLE_BY_OTHERS} (0022, as ssh's
   * StrictModes refuses such an `authorized_keys`). Throws a {@link FileTooOpenError}; checked on the open
   * file, before a byte is read. Not on Windows, whose modes say nothing of who can read a file.
   */
  readonly refuseMode?: number;
  /**
   * Refuse a file owned by none of these uids (`allowedOwners` of owner.ts): throws a {@link FileNotOwnedError},
   * checked on the open file, before a byte is read. `undefined` (Windows, or not asked): not checked.
   */
  readonly owners?: readonly number[];
}

/** {@link ReadUpToOptions.refuseMode} of a secret: no bit for group or others. */
export const OWNER_ONLY = 0o077;
/** {@link ReadUpToOptions.refuseMode} of a file others may read but not change (a public key). */
export const NOT_WRITABLE_BY_OTHERS = 0o022;

/** Thrown by {@link readFileUpTo} with `regularOnly` for a pipe, a socket or a device. */
export class NotRegularFileError extends Error {
  constructor(readonly path: string) {
    super("not a regular file (a pipe, a socket or a device)");
    this.name = "NotRegularFileError";
  }
}

/** Thrown by {@link readFileUpTo} with `refuseMode` for a file others can read or write. */
export class FileTooOpenError extends Error {
  readonly code = "ETOOOPEN";
  constructor(
    readonly path: string,
    /** The file's permission bits (`mode & 0o777`). */
    readonly mode: number,
    /** The bits that were refused. */
    readonly refused: number,
  ) {
    const how = (refused & 0o044) !== 0 ? "readable or writable" : "writable";
    super(`\`${path}\` is ${how} by others (mode ${mode.toString(8).padStart(4, "0")})`);
    this.name = "FileTooOpenError";
  }
}

/** The advice for a {@link FileTooOpenError}: why the file must be closed to others, and the `chmod` that does it. */
export function tooOpenMessage(err: FileTooOpenError, why: string): string {
  const fix = (err.refused & 0o044) !== 0 ? "600" : "go-w";
  return `${err.message}: ${why}; run \`chmod ${fix} ${err.path}\``;
}

/**
 * Reads a file of at most `maxBytes` bytes: its bytes, or `undefined` when it holds more. Never reads more
 * than `maxBytes + 1` bytes, so a file that is not what it should be — `/dev/zero`, a pipe that never
 * ends, a 2 GB file where a key or an anchor belongs — costs no more memory than the largest file accepted
 * (`readFileSync` then a size check read all of it first: a key file naming `/dev/zero` filled memory).
 * Throws as `readFileSync` does (`ENOENT`, `EISDIR`, `EACCES`, …), and with `regularOnly` an error whose
 * message says the file is not a regular file.
 */
export function readFileUpTo(path: string, maxBytes: number, options: ReadUpToOptions = {}): Buffer | undefined {
  const regularOnly = options.regularOnly === true;
  // O_NONBLOCK: opening a FIFO returns at once (it is refused below); a regular file reads as ever
  const fd = openSync(path, regularOnly ? constants.O_RDONLY | constants.O_NONBLOCK : "r");
  try {
    const stat = fstatSync(fd);
    if (regularOnly && !stat.isFile() && !stat.isDirectory()) {
      throw new NotRegularFileError(path);
    }
    const refused = options.refuseMode ?? 0;
    if (refused !== 0 && process.platform !== "win32" && (stat.mode & refused) !== 0) {
      throw new FileTooOpenError(path, stat.mode & 0o777, refused);
    }
    const owners = options.owners;
    if (owners !== undefined && !owners.includes(stat.uid)) {
      throw new FileNotOwnedError(path, stat.uid, process.getuid?.() ?? owners[0] ?? 0);
    }
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
