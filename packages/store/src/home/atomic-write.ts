import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { HOME_FILE_MODE } from "./paths.js";

/**
 * How a temporary file is created: exclusively (`O_EXCL`: an existing name, a symbolic link included, is
 * `EEXIST`, never opened) and without following a link at the name (`O_NOFOLLOW`, said twice on purpose).
 * Someone who can write the directory cannot make the write go through a link they planted there.
 */
export const EXCLUSIVE_CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A fresh, unguessable temporary name beside `path` (same directory, so the rename is atomic). */
export function temporaryPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`);
}

function bytesOf(data: string | Uint8Array): Uint8Array {
  return typeof data === "string" ? Buffer.from(data, "utf8") : data;
}

/**
 * Replaces a file atomically: writes a temporary file of a random name in the same directory, created
 * exclusively without following links ({@link EXCLUSIVE_CREATE_FLAGS}) with exactly `mode` (0600 by
 * default, whatever the umask), fsyncs it, renames it over the target (a link at the target is replaced,
 * not followed), and fsyncs the directory. A reader sees the old content or the new, never a mix; a crash
 * leaves at most a stray `.tmp` file.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode: number = HOME_FILE_MODE,
  owner?: { readonly uid: number; readonly gid: number },
): void {
  const tmp = writeTemporaryFile(path, data, mode, owner);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dirname(path));
}

/**
 * Creates a file that must not be replaced once it exists (a key two processes may both be creating):
 * writes and fsyncs a temporary file as {@link writeFileAtomic} does, then hard-links it to `path`, which
 * fails with `EEXIST` when anything (a symbolic link included) is already there, so of two processes
 * creating it at once exactly one succeeds and the other reads what the first wrote; a reader never sees a
 * partial file. `owner` (root making a file in a person's home) is given to the file before it appears.
 * On a file system without hard links (FAT, some FUSE and network mounts) the name itself is created
 * exclusively and written in one `write`: still exactly one creator wins, but a reader may see the file
 * empty or short for an instant and must read again. Throws as the steps do (`EEXIST` when it exists).
 */
export function createFileExclusive(
  path: string,
  data: string | Uint8Array,
  mode: number = HOME_FILE_MODE,
  owner?: { readonly uid: number; readonly gid: number },
  link: (existing: string, name: string) => void = linkSync,
): void {
  const tmp = writeTemporaryFile(path, data, mode, owner);
  let linked = false;
  try {
    link(tmp, path);
    linked = true;
  } catch (err) {
    if (!NO_HARD_LINKS.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  // No hard links here: the name itself is created exclusively (of two processes exactly one succeeds, a
  // planted link is never followed) and written in one `write`. A reader may see it empty or short for
  // that instant and must read again, as `loadMemoryKey` does; it never sees two writers' bytes mixed.
  if (!linked) writeNewFile(path, data, mode, owner);
  fsyncDir(dirname(path));
}

/**
 * What `link(2)` says on a file system without hard links (FAT, exFAT, some FUSE and network file
 * systems): `EPERM` on Linux, `ENOTSUP`/`EOPNOTSUPP`/`ENOSYS` elsewhere.
 */
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/** Writes `data` to a fresh temporary file beside `path` ({@link EXCLUSIVE_CREATE_FLAGS}, exactly `mode`), fsynced; its path. */
function writeTemporaryFile(
  path: string,
  data: string | Uint8Array,
  mode: number,
  owner?: { readonly uid: number; readonly gid: number },
): string {
  const tmp = temporaryPathFor(path);
  writeNewFile(tmp, data, mode, owner);
  return tmp;
}

/** Creates `path` ({@link EXCLUSIVE_CREATE_FLAGS}, exactly `mode`, given to `owner`) holding `data`, fsynced; removed again on failure. */
function writeNewFile(
  path: string,
  data: string | Uint8Array,
  mode: number,
  owner?: { readonly uid: number; readonly gid: number },
): void {
  const fd = openSync(path, EXCLUSIVE_CREATE_FLAGS, mode);
  try {
    if (owner !== undefined) fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, mode);
    const bytes = bytesOf(data);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw err;
  }
  closeSync(fd);
}

/** A replacement under way ({@link stageFileAtomic}): the temporary file is written, the rename not yet done. */
export interface StagedFile {
  /** Renames the fsynced temporary file into place and fsyncs the directory; rejects as the steps do. */
  commit(): Promise<void>;
  /** Waits for the temporary file's steps to settle and removes it; never rejects. */
  abandon(): Promise<void>;
}

/**
 * {@link writeFileAtomic} in two halves, without blocking the event loop: the temporary file (same
 * safe creation, exact `mode`) is written and fsynced and the directory opened at once; `commit` renames
 * it into place and fsyncs the directory. For a file that may only appear once something else is durable
 * (the audit anchor after the log's lines).
 */
export function stageFileAtomic(
  path: string,
  data: string | Uint8Array,
  mode: number = HOME_FILE_MODE,
  owner?: { readonly uid: number; readonly gid: number },
): StagedFile {
  const tmp = temporaryPathFor(path);
  const written = (async () => {
    const file = await open(tmp, EXCLUSIVE_CREATE_FLAGS, mode);
    try {
      if (owner !== undefined) await file.chown(owner.uid, owner.gid);
      await file.chmod(mode);
      await file.writeFile(bytesOf(data));
      await file.sync();
    } finally {
      await file.close();
    }
  })();
  const directory = open(dirname(path), "r");
  // failures surface in commit or abandon; meanwhile they must not count as unhandled
  written.catch(() => undefined);
  directory.catch(() => undefined);
  return {
    async commit() {
      let dir: FileHandle | undefined;
      try {
        await written;
        dir = await directory;
        await rename(tmp, path);
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => undefined);
        await (dir !== undefined ? dir.close() : directory.then((d) => d.close())).catch(() => undefined);
        throw err;
      }
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    },
    async abandon() {
      await written.catch(() => undefined);
      await directory.then((dir) => dir.close()).catch(() => undefined);
      await rm(tmp, { force: true }).catch(() => undefined);
    },
  };
}

function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
