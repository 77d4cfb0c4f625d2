import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";
import { MAX_POLICY_BYTES, formatIssue, parsePolicy, type Policy } from "@acp/core";
import { readFailure } from "../decision/read-input.js";

/**
 * How often, at most, a running `acp proxy` or `acp serve` looks at its policy file (one `stat`, ~4 µs):
 * a decision made this long after the file was saved uses it. Between two looks a decision costs one
 * clock read more.
 */
export const POLICY_CHECK_INTERVAL_MS = 250;

/**
 * A file last written less than this long before a look is taken at the next look instead: a save still
 * being written in place (truncated, then written) is not read half-way, where a prefix of the new file could
 * validate and be looser than the whole. With {@link POLICY_CHECK_INTERVAL_MS}, a decision made 350 ms after
 * the last write uses the file.
 */
export const POLICY_SETTLE_MS = 100;

/** After a reload could not be recorded, the next try waits this many intervals (5 s by default). */
const RETRY_INTERVALS = 20;

/** One policy in force: what it says and the `sha256:` of the bytes it was read from. */
export interface PolicyVersion {
  readonly policy: Policy;
  readonly hash: string;
}

/** What a front end tells of a reload: its audit (awaited before any decision uses the new policy) and stderr. */
export interface PolicyReloadOptions {
  /** The policy file watched. */
  readonly file: string;
  /** The policy in force at start (read from `file`, or the built-in starter when `file` is missing). */
  readonly initial: PolicyVersion;
  readonly log: (line: string) => void;
  /** Appends an audit event; a rejection refuses the decisions that would use the new policy. */
  readonly record: (eventType: "policy_reloaded" | "policy_reload_refused", fields: Record<string, unknown>) => unknown;
  /** Default {@link POLICY_CHECK_INTERVAL_MS}. */
  readonly intervalMs?: number;
  /** A monotonic clock in ms; default `performance.now`. */
  readonly monotonic?: () => number;
  /** The wall clock in ms, against the file's modification time ({@link POLICY_SETTLE_MS}); default `Date.now`. */
  readonly wallClock?: () => number;
}

/** The policy in force, picked up again whenever its file changes and the new text validates. */
export interface ReloadingPolicy {
  /**
   * The version the next decision uses. At most every interval it stats the file; a changed file is read
   * and validated then: valid, it replaces the old version (for every decision after this one), else the
   * old one stays in force and the problems are printed once for that version of the file.
   */
  current(): PolicyVersion;
  /**
   * Resolves once the audit event of the version {@link current} returned last is recorded, null when it is;
   * rejects if it could not be recorded (the decision is then refused; the last recorded version comes back
   * into force and the reload is tried again at the next look).
   */
  recorded(): Promise<void> | null;
}

/** The `sha256:` of a policy's bytes, as decisions and reload events name it. */
export function policyHash(bytes: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** What identifies one version of a file on disk without reading it; null when there is no file. */
function identityOf(stats: BigIntStats | undefined): string | null {
  if (stats === undefined) return null;
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

type ReadPolicy =
  | { readonly ok: true; readonly version: PolicyVersion; readonly identity: string }
  | {
      readonly ok: false;
      readonly problems: readonly string[];
      /** Why the file could not be read at all (`no such file`, `not a file`, …); absent when it does not validate. */
      readonly unreadable?: string;
      readonly hash?: string;
      readonly identity: string | null;
    };

/**
 * Reads and validates one version of a policy file, never hanging (a FIFO is opened non-blocking and refused)
 * and never reading more than the policy limit. Every problem is a line: `FILE:LINE:COL: message`, or the file
 * and why it cannot be read.
 */
export function readPolicyVersion(file: string): ReadPolicy {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return unreadable(file, readFailure(err), null);
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    const identity = identityOf(stats) ?? "";
    if (!stats.isFile()) return unreadable(file, "not a file", identity);
    if (stats.size > BigInt(MAX_POLICY_BYTES)) {
      const problem = `${file}:1:1: policy is ${stats.size} bytes, larger than ${MAX_POLICY_BYTES} bytes (10 MiB)`;
      return { ok: false, problems: [problem], identity };
    }
    const bytes = readAtMost(fd, MAX_POLICY_BYTES + 1);
    const hash = policyHash(bytes);
    const parsed = parsePolicy(Buffer.from(bytes).toString("utf8"), { file });
    if (!parsed.ok) return { ok: false, problems: parsed.issues.map((i) => formatIssue(i, file)), hash, identity };
    return { ok: true, version: { policy: parsed.value, hash }, identity };
  } catch (err) {
    return unreadable(file, readFailure(err), null);
  } finally {
    closeSync(fd);
  }
}

function unreadable(file: string, why: string, identity: string | null): ReadPolicy {
  return { ok: false, problems: [`${file}: cannot read the policy: ${why}`], unreadable: why, identity };
}

function readAtMost(fd: number, max: number): Uint8Array {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max - total));
    const n = chunk.length === 0 ? 0 : readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/** What a look at the file sees: its identity, and when it was last written (ms), if there is one. */
function lookAt(file: string): { readonly identity: string | null; readonly writtenMs?: number } {
  try {
    const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stats === undefined
      ? { identity: null }
      : { identity: identityOf(stats), writtenMs: Number(stats.mtimeNs / 1_000_000n) };
  } catch {
    return { identity: "unreadable" }; // e.g. EACCES on the directory: read it to say why
  }
}

/**
 * Watches a policy file for a running front end: {@link ReloadingPolicy.current} on the decision path costs
 * a clock read, and a `stat` at most every {@link POLICY_CHECK_INTERVAL_MS}. A reload is atomic (the next
 * decision uses the whole new policy, never part of it) and fails closed (an invalid, unreadable, oversized
 * or missing file keeps the last good policy in force; nothing falls back to a looser one). Each reload, and
 * each version of the file that was not taken, is audited (`policy_reloaded`, `policy_reload_refused`) and
 * said on stderr once.
 */
export function createReloadingPolicy(options: PolicyReloadOptions): ReloadingPolicy {
  const interval = options.intervalMs ?? POLICY_CHECK_INTERVAL_MS;
  const monotonic = options.monotonic ?? (() => performance.now());
  let inForce = options.initial;
  const wallClock = options.wallClock ?? Date.now;
  let seen = lookAt(options.file).identity;
  // a version seen while it was still being written: taken at the next look whatever its age
  let settling: string | null = null;
  let nextCheck = monotonic() + interval;
  let pending: Promise<void> | null = null;
  // the last version whose coming into force is in the audit (the initial one needs no event)
  let recordedVersion = inForce;
  const audit = (eventType: "policy_reloaded" | "policy_reload_refused", fields: Record<string, unknown>): void => {
    const version = inForce;
    const write = Promise.resolve(pending)
      .then(() => options.record(eventType, { file: options.file, ...fields }))
      .then(() => undefined);
    pending = write;
    write.then(
      () => {
        recordedVersion = version;
        if (pending === write) pending = null;
      },
      (err: unknown) => {
        // the decisions waiting on it are refused; later ones go on with the last recorded version, and the
        // file is read (and the reload recorded) again at the next look: an audit that comes back (a
        // PostgreSQL failover) then records it
        if (pending === write) pending = null;
        if (inForce !== recordedVersion) {
          options.log(
            `error: the reload of policy ${options.file} could not be recorded (${err instanceof Error ? err.message : String(err)}), so ${recordedVersion.hash} stays in force`,
          );
          inForce = recordedVersion;
        }
        seen = "unrecorded";
        nextCheck = monotonic() + RETRY_INTERVALS * interval; // an audit that is down is not asked every look
      },
    );
  };
  const reload = (): void => {
    const read = readPolicyVersion(options.file);
    const after = lookAt(options.file).identity;
    if (read.identity !== null && after !== read.identity) {
      seen = "changing"; // written (or replaced) while it was read: read it again at the next look
      return;
    }
    seen = read.identity ?? after;
    if (read.ok) {
      if (read.version.hash === inForce.hash) return; // touched, or written back as it was
      const previous = inForce.hash;
      inForce = read.version;
      options.log(`policy ${options.file} changed: deciding with ${inForce.hash} from now on (was ${previous})`);
      audit("policy_reloaded", { policy_hash: inForce.hash, previous_policy_hash: previous });
      return;
    }
    options.log(`error: policy ${options.file} changed but cannot be used, so ${inForce.hash} stays in force:`);
    for (const problem of read.problems) options.log(problem);
    audit("policy_reload_refused", {
      policy_hash: inForce.hash,
      refused_policy_hash: read.hash ?? null,
      problems: read.problems,
    });
  };
  return {
    current() {
      const now = monotonic();
      if (now < nextCheck) return inForce;
      nextCheck = now + interval;
      const look = lookAt(options.file);
      if (look.identity === seen) return inForce;
      const age = look.writtenMs === undefined ? Infinity : wallClock() - look.writtenMs;
      if (look.identity !== settling && age >= 0 && age < POLICY_SETTLE_MS) {
        settling = look.identity; // just written, maybe not yet whole: read it at the next look
        return inForce;
      }
      settling = null;
      reload();
      return inForce;
    },
    recorded: () => pending,
  };
}
