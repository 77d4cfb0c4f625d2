import { ok, parsePrivateKeyFile, unwrapPrivateKey, type PrivateKeyFileV1, type Result } from "@acp/core";
import { allowedOwners, FileNotOwnedError, notOwnedMessage } from "./owner.js";
import { homePaths } from "./paths.js";
import { FileTooOpenError, NOT_WRITABLE_BY_OTHERS, OWNER_ONLY, readFileUpTo, tooOpenMessage } from "./read-up-to.js";
import { failWith, ioMessage } from "./result.js";

/** Largest key file we read; anything bigger is not ours. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** Why a key file must be owned by the user acp runs as. */
const OWNER_WHY = "whoever owns a key file can replace it";

function readSmall(home: string, path: string, what: string, refuseMode: number, why: string): Result<string> {
  try {
    const owners = allowedOwners(home);
    const buf = readFileUpTo(path, MAX_KEY_FILE_BYTES, {
      regularOnly: true,
      refuseMode,
      ...(owners !== undefined ? { owners } : {}),
    });
    if (buf === undefined) return failWith({ code: "key_file_malformed" }, `${what} is too large to be a key file`);
    return ok(buf.toString("utf8"));
  } catch (err) {
    if (err instanceof FileTooOpenError) return failWith({ code: "key_file_too_open" }, tooOpenMessage(err, why));
    if (err instanceof FileNotOwnedError)
      return failWith({ code: "key_file_not_owned" }, notOwnedMessage(err, OWNER_WHY));
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT")
      return failWith({ code: "key_missing" }, `${what} not found: \`${path}\` (run \`acp init\`)`);
    return failWith({ code: "key_unreadable" }, `cannot read ${what} \`${path}\`: ${ioMessage(err)}`);
  }
}

/** Why `keys/public.key` must not be writable by others: it decides which signatures verify. */
const PUBLIC_KEY_WHY = "whoever can change it decides which signatures verify";

/**
 * Reads `keys/public.key`: 64 lowercase hex digits (a trailing newline is allowed). Others may read it, but
 * one group or others can write is refused (`key_file_too_open`), as ssh's StrictModes refuses such an
 * `authorized_keys`: whoever can change it decides which checkpoints and approvals verify. One owned by
 * another user is refused too (`key_file_not_owned`, naming the `chown` fix; `allowedOwners`).
 */
export function readPublicKeyHex(home: string): Result<string> {
  const text = readSmall(home, homePaths(home).publicKey, "public key", NOT_WRITABLE_BY_OTHERS, PUBLIC_KEY_WHY);
  if (!text.ok) return text;
  const hex = text.value.trim();
  if (!/^[0-9a-f]{64}$/.test(hex))
    return failWith({ code: "key_file_malformed" }, "public key file is not 64 lowercase hex digits");
  return ok(hex);
}

/**
 * Reads and parses `keys/private.key` (not decrypted). Like ssh, refuses a key file group or others can
 * read or write (`key_file_too_open`, naming the `chmod 600` fix): encrypted or not, it must be yours alone.
 * One owned by another user is refused too (`key_file_not_owned`, naming the `chown` fix; `allowedOwners`).
 */
export function readPrivateKeyFile(home: string): Result<PrivateKeyFileV1> {
  const text = readSmall(
    home,
    homePaths(home).privateKey,
    "private key",
    OWNER_ONLY,
    "a private key must be yours alone",
  );
  return text.ok ? parsePrivateKeyFile(text.value) : text;
}

/**
 * The master Ed25519 seed of a home: reads `keys/private.key`, opens it with the passphrase, and checks
 * it against `keys/public.key` (`key_mismatch` when they are not a pair). The seed signs consent proofs
 * and keys the vault; callers keep it in memory only.
 */
export function loadMasterSeed(home: string, passphrase: string | undefined): Result<Uint8Array> {
  const file = readPrivateKeyFile(home);
  if (!file.ok) return file;
  const pub = readPublicKeyHex(home);
  if (!pub.ok) return pub;
  if (pub.value !== file.value.public_key) {
    return failWith({ code: "key_mismatch" }, "keys/public.key and keys/private.key are not a pair");
  }
  return unwrapPrivateKey(file.value, passphrase);
}
