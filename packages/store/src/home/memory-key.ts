import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { ok, type Result } from "@acp/core";
import { createFileExclusive } from "./atomic-write.js";
import { allowedOwners, FileNotOwnedError, notOwnedMessage } from "./owner.js";
import { homePaths } from "./paths.js";
import { FileTooOpenError, OWNER_ONLY, readFileUpTo, tooOpenMessage } from "./read-up-to.js";
import { failWith, ioMessage } from "./result.js";

/** Bytes of the provenance memory's key. */
export const MEMORY_KEY_BYTES = 32;
/** Largest `memory.key` read: the key's 64 hex digits, a newline, and room for a `\r`. */
const MAX_MEMORY_KEY_FILE_BYTES = 128;
const MEMORY_KEY_TEXT = /^[0-9a-f]{64}\r?\n?$/;
/** The beginning of a key still being written in place (no hard links): fewer than 64 hex digits, nothing after. */
const PARTIAL_KEY_TEXT = /^[0-9a-f]{0,63}$/;
const WHY = "whoever can read it can test guesses of the identifiers the session memory keeps";
const OWNER_WHY = "whoever owns the memory key can read it, or replace it with one they know";

/**
 * The key of the session runtime's provenance memory: `$ACP_HOME/memory.key`, 32 random bytes as 64
 * lowercase hex digits and a newline, mode 0600. `state.db` keeps only HMAC-SHA-256 digests of the
 * identifiers read under this key, so whoever reads `state.db` alone cannot test a guess (a phone or
 * account number tried one by one). Created when missing, exclusively ({@link createFileExclusive}: of two
 * processes creating it at once, both end up with the one key), owned by the home's owner when root makes
 * it. Refused, never replaced: a file group or
 * others can read or write (`key_file_too_open`, naming the `chmod 600` fix), one another user owns than
 * {@link allowedOwners} of the home accepts (`key_file_not_owned`, naming the `chown` fix: whoever owns it
 * can read it, or replace it with a key they know), one that is not a key
 * (`key_file_malformed`), one that cannot be read (`key_unreadable`), a failure to create it
 * (`home_write_failed`).
 */
export function loadMemoryKey(
  home: string,
  random: (n: number) => Uint8Array = randomBytes,
  pause: (ms: number) => void = sleepSync,
): Result<Uint8Array> {
  const path = homePaths(home).memoryKey;
  for (let attempt = 0; attempt < 2; attempt++) {
    const read = readMemoryKeySettled(path, pause);
    if (read !== "missing") return read;
    try {
      createFileExclusive(path, `${Buffer.from(random(MEMORY_KEY_BYTES)).toString("hex")}\n`, 0o600, ownerFor(home));
    } catch (err) {
      // another process made it first: read theirs
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      return failWith({ code: "home_write_failed" }, `cannot create \`${path}\`: ${ioMessage(err)}`);
    }
  }
  return readMemoryKeySettled(path, pause) as Result<Uint8Array>;
}

/** How long a reader waits, in all, for a key another process is writing in place to be whole. */
const PARTIAL_KEY_WAIT_MS = 2000;
const PARTIAL_KEY_STEP_MS = 20;

/**
 * {@link readMemoryKey}, reading again while the file is the beginning of a key (empty, or hex digits
 * short of 64): on a file system without hard links another process creates the key in place
 * ({@link createFileExclusive}) and may not have written it yet. A file still short after
 * {@link PARTIAL_KEY_WAIT_MS} is `key_file_malformed`.
 */
function readMemoryKeySettled(path: string, pause: (ms: number) => void): Result<Uint8Array> | "missing" {
  for (let waited = 0; ; waited += PARTIAL_KEY_STEP_MS) {
    const read = readMemoryKey(path);
    if (read !== "partial") return read;
    if (waited >= PARTIAL_KEY_WAIT_MS) return malformed(path);
    pause(PARTIAL_KEY_STEP_MS);
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Root making the key in a person's home (`sudo -E acp run`, for network namespaces) gives it to the home's
 * owner: a key root kept would be unreadable to the person's own `acp proxy`, whose every recall would fail.
 */
function ownerFor(home: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = statSync(home, { throwIfNoEntry: false });
  return st === undefined || st.uid === 0 ? undefined : { uid: st.uid, gid: st.gid };
}

function readMemoryKey(path: string): Result<Uint8Array> | "missing" | "partial" {
  let buf: Buffer | undefined;
  try {
    const owners = allowedOwners(dirname(path));
    buf = readFileUpTo(path, MAX_MEMORY_KEY_FILE_BYTES, {
      regularOnly: true,
      refuseMode: OWNER_ONLY,
      ...(owners !== undefined ? { owners } : {}),
    });
  } catch (err) {
    if (err instanceof FileTooOpenError) return failWith({ code: "key_file_too_open" }, tooOpenMessage(err, WHY));
    if (err instanceof FileNotOwnedError)
      return failWith({ code: "key_file_not_owned" }, notOwnedMessage(err, OWNER_WHY));
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    return failWith({ code: "key_unreadable" }, `cannot read the memory key \`${path}\`: ${ioMessage(err)}`);
  }
  const text = buf?.toString("latin1");
  if (text !== undefined && PARTIAL_KEY_TEXT.test(text)) return "partial";
  if (text === undefined || !MEMORY_KEY_TEXT.test(text)) return malformed(path);
  return ok(new Uint8Array(Buffer.from(text.slice(0, 64), "hex")));
}

function malformed(path: string): Result<Uint8Array> {
  return failWith(
    { code: "key_file_malformed" },
    `\`${path}\` is not a memory key (64 lowercase hex digits); remove it and a new one is made (what the memory kept is then treated as forgotten)`,
  );
}
