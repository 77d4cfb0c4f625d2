import { randomUUID } from "node:crypto";
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { AuditLogError } from "./audit-log-error.js";

/** Options of {@link acquireFileLock}. */
export interface FileLockOptions {
  /** A lock whose file is older than this is stale even if its pid looks alive (default 30 s). */
  readonly staleMs?: number;
  /** Give up after waiting this long (default 10 s). */
  readonly timeoutMs?: number;
}

/** Releases a held lock; safe to call twice. */
export type ReleaseLock = () => void;

/** Thrown when a lock cannot be taken in time. */
export class FileLockTimeoutError extends AuditLogError {
  constructor(path: string, holder: string) {
    super({ code: "audit_lock_timeout" }, `timed out waiting for the lock \`${path}\` (held by pid ${holder})`);
    this.name = "FileLockTimeoutError";
  }
}

const HOST = hostname();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readHolder(path: string): { text: string; mtimeMs: number } | undefined {
  try {
    return { text: readFileSync(path, "utf8"), mtimeMs: statSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder recorded in a lock file is gone: a dead pid on this host, or a file older than
 * `staleMs` (this also frees a lock whose creator died before writing its pid).
 */
function isStale(holder: { text: string; mtimeMs: number }, staleMs: number, nowMs: number): boolean {
  if (nowMs - holder.mtimeMs > staleMs) return true;
  const [pid, host, token] = holder.text.split("\n");
  if (token === undefined) return false;
  const n = Number(pid);
  return host === HOST && Number.isSafeInteger(n) && n > 0 && !isAlive(n);
}

/**
 * Moves a stale lock aside and deletes it, but only if it is still the stale one we read (a rename is
 * atomic; comparing contents afterwards catches a racing process that broke it and took it first, in
 * which case the fresh lock is linked back).
 */
function breakStaleLock(path: string, staleText: string): void {
  const grave = `${path}.stale-${process.pid}-${randomUUID()}`;
  try {
    renameSync(path, grave);
  } catch {
    return;
  }
  const moved = readHolder(grave)?.text;
  if (moved !== staleText) {
    try {
      linkSync(grave, path);
    } catch {
      // a third process took the lock meanwhile; nothing we can restore
    }
  }
  unlinkSync(grave);
}

/** One attempt: creates the lock file with `O_EXCL`, writing `pid\nhost\ntoken`. */
function tryCreate(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  try {
    writeSync(fd, `${process.pid}\n${HOST}\n${token}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Longest wait between two attempts. Kept below {@link LOCK_HANDOVER_MS}: a writer with more to write
 * pauses that long after releasing, so every waiter tries at least once in the pause and one of them
 * gets the lock (without it, a writer with a steady queue re-takes the lock at once and starves the rest).
 */
export const MAX_BACKOFF_MS = 4;

/** How long a writer that just released the lock waits before taking it again for its next batch. */
export const LOCK_HANDOVER_MS = 5;

/**
 * Takes an exclusive lock shared by every process on this machine: a lock file created with `O_EXCL`
 * holding the owner's pid and host. A lock left by a dead process (same host, pid gone) or older than
 * `staleMs` is broken. Waits with a growing back-off (1 ms to {@link MAX_BACKOFF_MS}) up to `timeoutMs`.
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<ReleaseLock> {
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const token = randomUUID();
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(path, token)) return releaser(path, token);
    const holder = readHolder(path);
    if (holder !== undefined && isStale(holder, staleMs, Date.now())) {
      breakStaleLock(path, holder.text);
      continue;
    }
    if (Date.now() > deadline) {
      throw new FileLockTimeoutError(path, holder?.text.split("\n")[0] ?? "an unknown process");
    }
    await sleep(Math.min(MAX_BACKOFF_MS, 1 + attempt));
  }
}

function releaser(path: string, token: string): ReleaseLock {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const holder = readHolder(path);
    if (holder?.text.split("\n")[2] === token) unlinkSync(path);
  };
}
