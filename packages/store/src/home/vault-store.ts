import { ok, openVault, sealVault, type RandomBytes, type Result, type VaultEntries } from "@acp/core";
import { writeFileAtomic } from "./atomic-write.js";
import { allowedOwners, FileNotOwnedError, notOwnedMessage } from "./owner.js";
import { homePaths } from "./paths.js";
import { FileTooOpenError, OWNER_ONLY, readFileUpTo, tooOpenMessage } from "./read-up-to.js";
import { failWith, ioMessage } from "./result.js";

/** Largest `vault.json` we read (16 MiB). */
export const MAX_VAULT_BYTES = 16 * 1024 * 1024;

/**
 * Reads and opens `vault.json` with the master seed. A missing vault is empty; a corrupted one is
 * `vault_malformed` or `vault_decrypt_failed`, one group or others can read or write `vault_too_open`
 * (naming the `chmod 600` fix), one owned by another user `vault_not_owned` (naming the `chown` fix;
 * `allowedOwners`); nothing is written.
 */
export function readVault(home: string, seed: Uint8Array): Result<VaultEntries> {
  const path = homePaths(home).vault;
  let text: string;
  try {
    const owners = allowedOwners(home);
    const buf = readFileUpTo(path, MAX_VAULT_BYTES, {
      regularOnly: true,
      refuseMode: OWNER_ONLY,
      ...(owners !== undefined ? { owners } : {}),
    });
    if (buf === undefined) return failWith({ code: "vault_malformed" }, `\`${path}\` is larger than 16 MiB`);
    text = buf.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return ok({});
    if (err instanceof FileTooOpenError)
      return failWith({ code: "vault_too_open" }, tooOpenMessage(err, "the vault must be yours alone"));
    if (err instanceof FileNotOwnedError)
      return failWith({ code: "vault_not_owned" }, notOwnedMessage(err, "whoever owns it can roll it back"));
    return failWith({ code: "vault_unreadable" }, `cannot read \`${path}\`: ${ioMessage(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return failWith({ code: "vault_malformed" }, `\`${path}\` is not json (corrupted); it was left as it is`);
  }
  const opened = openVault(parsed, seed);
  if (opened.ok) return opened;
  const first = opened.issues[0];
  return failWith(
    { code: first?.code ?? "vault_malformed" },
    `\`${path}\`: ${first?.message ?? "invalid"}; it was left as it is`,
  );
}

/** Seals the entries with a fresh salt and IV and replaces `vault.json` atomically (0600). */
export function writeVault(
  home: string,
  entries: VaultEntries,
  seed: Uint8Array,
  randomBytes: RandomBytes,
): Result<void> {
  const path = homePaths(home).vault;
  try {
    writeFileAtomic(path, `${JSON.stringify(sealVault(entries, seed, randomBytes), null, 2)}\n`);
    return ok(undefined);
  } catch (err) {
    return failWith({ code: "vault_write_failed" }, `cannot write \`${path}\`: ${ioMessage(err)}`);
  }
}
