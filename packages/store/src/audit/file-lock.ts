import { randomUUID } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  futimesSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
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

/** Whether the pid in a holder text (`pid\nhost\ntoken`) is a process on this host that is gone. */
function isDeadHere(text: string): boolean {
  const [pid, host, token] = text.split("\n");
  if (token === undefined) return false;
  const n = Number(pid);
  return host === HOST && Number.isSafeInteger(n) && n > 0 && !isAlive(n);
}

/**
 * Whether the holder recorded in a lock file is gone: a dead pid on this host, or a file older than
 * `staleMs` (this also frees a lock whose creator died before writing its pid).
 */
function isStale(holder: { text: string; mtimeMs: number }, staleMs: number, nowMs: number): boolean {
  if (nowMs - holder.mtimeMs > staleMs) return true;
  return isDeadHere(holder.text);
}

/** A breaker (`<lock>.break`) older than this was left by a process that died while breaking a lock. */
const BREAKER_STALE_MS = 2_000;

/**
 * Breaks a stale lock whose holder text was read as `staleText`. Breakers take turns at `<lock>.break`
 * (created with `O_EXCL`) and, holding it, read the lock again: only when it is still the stale one is it
 * moved aside (atomic) and deleted. Before 27 Nov 2026 there was no breaker: two waiters that read the same
 * dead holder both broke it, the later one moved aside the lock the earlier one had just taken, and while
 * it put it back a third took the free name, so two processes held the lock at once and their batches forked
 * the chain. What is left: a holder judged stale by age (alive, but holding the lock past `staleMs`) may
 * release and another take the lock between the read and the move; the contents are compared after the move
 * and the lock put back, as before.
 */
function breakStaleLock(path: string, staleText: string): void {
  const breaker = `${path}.break`;
  try {
    closeSync(openSync(breaker, "wx", 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return;
    // another process is breaking it; a breaker left by one that died doing so is removed once old
    const since = Date.now() - (statSync(breaker, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (since > BREAKER_STALE_MS) unlinkQuietly(breaker);
    return;
  }
  try {
    if (readHolder(path)?.text !== staleText) return;
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
  } finally {
    unlinkQuietly(breaker);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** One attempt: creates the lock file with `O_EXCL`, writing `pid\nhost\ntoken`. */
function tryCreate(path: string, token: string): boolean {
  if (existsSync(path)) return false;
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

/**
 * A waiter reads the lock's holder (to break a stale lock) on its first miss and then at most this
 * often: a dead holder's lock is broken within this long, not at once.
 */
export const STALE_CHECK_MS = 100;

/** How long a writer that just released the lock waits before taking it again for its next batch. */
export const LOCK_HANDOVER_MS = 5;

/**
 * Takes an exclusive lock shared by every process on this machine: a lock file created with `O_EXCL`
 * holding the owner's pid and host. A lock left by a dead process (same host, pid gone) or older than
 * `staleMs` is broken (the holder is read on the first miss, then every {@link STALE_CHECK_MS}). Waits with a
 * growing back-off (1 ms to {@link MAX_BACKOFF_MS}) up to `timeoutMs`.
 * For one lock taken many times (the audit writer's batches) see {@link FileLock}, which is cheaper.
 */
export async function acquireFileLock(path: string, options: FileLockOptions = {}): Promise<ReleaseLock> {
  const token = randomUUID();
  return waitForLock(
    path,
    options,
    () => tryCreate(path, token),
    () => releaser(path, token),
  );
}

/** Tries `attempt` until it takes the lock, breaking a stale lock, with back-off, up to the timeout. */
async function waitForLock(
  path: string,
  options: FileLockOptions,
  attempt: () => boolean,
  taken: () => ReleaseLock,
): Promise<ReleaseLock> {
  const staleMs = options.staleMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let deadline = Date.now() + timeoutMs;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let lastTake: string | undefined;
  for (let n = 0; ; n++) {
    if (attempt()) return taken();
    // the holder is read (is it gone? too old?) on the first miss, then at most every STALE_CHECK_MS:
    // a live writer holds the lock for one write, and several waiting writers reading it (a read,
    // a stat, a signal) on every try cost more than the writes they wait for
    const now = Date.now();
    if (now - checkedAt >= STALE_CHECK_MS || now > deadline) {
      checkedAt = now;
      const holder = readHolder(path);
      if (holder !== undefined && isStale(holder, staleMs, now)) {
        breakStaleLock(path, holder.text);
        continue;
      }
      // The wait gives up when one take of the lock lasts the whole timeout, not when others keep taking
      // it in turn: a lock that changed hands (another holder, or a new take, which touches the file) is
      // progress, and the wait starts again. Eight proxies sharing a home on two busy cores had a waiter
      // miss every try for 10 s while the others wrote, and its batch was lost.
      const take = holder === undefined ? undefined : `${holder.mtimeMs}\n${holder.text}`;
      if (take !== lastTake) {
        if (lastTake !== undefined || take === undefined) deadline = now + timeoutMs;
        lastTake = take;
      }
      if (now > deadline) {
        throw new FileLockTimeoutError(path, holder?.text.split("\n")[0] ?? "an unknown process");
      }
    }
    await sleep(Math.min(MAX_BACKOFF_MS, 1 + n));
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

/** Holder files of this process not yet removed, removed when it exits (a crash leaves them; see the sweep). */
const liveHolders = new Set<string>();
let exitHookSet = false;

function removeLiveHolders(): void {
  for (const path of liveHolders) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
}

/** `<lock>.<pid>.<8 hex>`: a holder file's name beside its lock. */
const HOLDER_SUFFIX = /^\.\d+\.[0-9a-f]{8}$/;

/**
 * Removes the holder files of `lockPath` left by processes of this host that are gone (killed before
 * they closed their writer). A holder of a live process, or of another host, is left alone.
 */
function sweepDeadHolders(lockPath: string): void {
  for (const path of holderFiles(lockPath, false)) {
    try {
      if (isDeadHere(readFileSync(path, "utf8"))) unlinkSync(path);
    } catch {
      // gone meanwhile, or unreadable: not ours to judge
    }
  }
}

/**
 * The holder files `<lock>.<pid>.<8 hex>` beside `lockPath` (and the lock itself when `withLock`), as paths;
 * none when the directory cannot be read.
 */
function holderFiles(lockPath: string, withLock: boolean): string[] {
  const dir = dirname(lockPath);
  const prefix = basename(lockPath);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter(
      (name) =>
        (withLock && name === prefix) || (name.startsWith(prefix) && HOLDER_SUFFIX.test(name.slice(prefix.length))),
    )
    .map((name) => join(dir, name));
}

/** A process holding a lock, or keeping a holder file beside it (a {@link FileLock} that has not closed). */
export interface LockHolder {
  /** The lock file or the holder file `<lock>.<pid>.<8 hex>`. */
  readonly path: string;
  readonly pid: number;
  readonly host: string;
}

/**
 * Who holds `lockPath` or keeps a holder file beside it, save processes of this host that are gone: every
 * open {@link FileLock} (an audit writer keeps its holder file from its first take until it closes or its
 * process exits), and a lock taken by {@link acquireFileLock}. A holder of another host cannot be judged
 * here and is listed. Read only: nothing is removed. A file unreadable or not in the holder format is left
 * out, as a waiter's stale check leaves it to age.
 */
export function listLockHolders(lockPath: string): LockHolder[] {
  const holders: LockHolder[] = [];
  for (const path of holderFiles(lockPath, true)) {
    const text = readHolder(path)?.text;
    if (text === undefined || isDeadHere(text)) continue;
    const [pid, host, token] = text.split("\n");
    const n = Number(pid);
    if (token === undefined || host === undefined || !Number.isSafeInteger(n) || n <= 0) continue;
    holders.push({ path, pid: n, host });
  }
  return holders;
}

/** What `link` fails with on a file system without hard links. */
const NO_LINKS: ReadonlySet<string> = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK"]);

interface Holder {
  readonly path: string;
  readonly fd: number;
  readonly ino: number;
  readonly dev: number;
}

/**
 * The lock of {@link acquireFileLock} for one holder that takes it again and again (one audit writer,
 * one take per group commit), at a fraction of the cost. The writer keeps a holder file of its own
 * beside the lock, `<lock>.<pid>.<8 hex>`, holding `pid\nhost\ntoken` as a lock file does, and takes
 * the lock by hard-linking it to the lock's name (`link` fails with `EEXIST` when the lock is held,
 * as `O_EXCL` does): no file is created, written or deleted per take, only a name added and removed,
 * which costs the file system about a tenth of creating, writing and deleting a file. The holder's
 * modification time is set to now just before each take, so others judge the lock's age as they
 * judge a created one; its content is what a created lock holds, so {@link acquireFileLock} and
 * older writers read, wait for and break it as before. Release removes the name only if it is still
 * the holder's inode (which cannot be reused while the holder's file is open).
 *
 * The holder file is removed by {@link close} and when the process exits; one left by a process that
 * was killed is removed by the next `FileLock` of the same lock on this host (its pid is gone). Where
 * `link` is not supported (EPERM, ENOTSUP, …), the lock falls back to creating a lock file per take.
 */
export class FileLock {
  private holder: Holder | null = null;
  private swept = false;
  /** `link` is not supported where the lock lives: the lock is taken as {@link acquireFileLock} does. */
  private noLinks = false;

  constructor(
    readonly path: string,
    private readonly options: FileLockOptions = {},
  ) {}

  /** Takes the lock (see {@link acquireFileLock} for waiting, stale locks and the timeout). */
  acquire(): Promise<ReleaseLock> {
    let holder: Holder | undefined;
    let token: string | undefined;
    return waitForLock(
      this.path,
      this.options,
      () => {
        // a held lock is seen without a failing link (whose thrown error costs more than the check)
        if (existsSync(this.path)) return false;
        if (this.noLinks) return tryCreate(this.path, (token ??= randomUUID()));
        holder = this.ensureHolder();
        const now = new Date();
        futimesSync(holder.fd, now, now);
        try {
          linkSync(holder.path, this.path);
          return true;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "EEXIST") return false;
          // the holder's file was removed by someone else: make a new one and try again
          if (code === "ENOENT" && !statSync(holder.path, { throwIfNoEntry: false })) {
            this.dropHolder();
            return false;
          }
          // a file system without hard links (FAT, some network shares): lock files are created instead
          if (code !== undefined && NO_LINKS.has(code)) {
            this.noLinks = true;
            this.dropHolder();
            return tryCreate(this.path, (token ??= randomUUID()));
          }
          throw err;
        }
      },
      () => (this.noLinks ? releaser(this.path, token as string) : this.releaser(holder as Holder)),
    );
  }

  /** Removes the holder file (the lock must not be held). Taking the lock again makes a new one. */
  close(): void {
    this.dropHolder();
  }

  private releaser(holder: Holder): ReleaseLock {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = statSync(this.path, { throwIfNoEntry: false });
      if (now !== undefined && now.ino === holder.ino && now.dev === holder.dev) unlinkSync(this.path);
    };
  }

  private ensureHolder(): Holder {
    if (this.holder !== null) return this.holder;
    if (!this.swept) {
      this.swept = true;
      sweepDeadHolders(this.path);
    }
    const token = randomUUID();
    const path = `${this.path}.${process.pid}.${token.slice(0, 8)}`;
    const fd = openSync(path, "wx", 0o600);
    try {
      writeSync(fd, `${process.pid}\n${HOST}\n${token}\n`);
    } catch (err) {
      closeSync(fd);
      unlinkSync(path);
      throw err;
    }
    const { ino, dev } = fstatSync(fd);
    liveHolders.add(path);
    if (!exitHookSet) {
      exitHookSet = true;
      process.on("exit", removeLiveHolders);
    }
    this.holder = { path, fd, ino, dev };
    return this.holder;
  }

  private dropHolder(): void {
    const holder = this.holder;
    if (holder === null) return;
    this.holder = null;
    liveHolders.delete(holder.path);
    closeSync(holder.fd);
    try {
      unlinkSync(holder.path);
    } catch {
      // already removed
    }
  }
}
