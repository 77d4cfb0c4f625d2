import { unwrapPrivateKey } from "@acp/core";
import { readPrivateKeyFile, readPublicKeyHex } from "@acp/store";
import { printError, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { orThrow } from "./or-throw.js";
import { resolvePassphrase } from "./secret-input.js";

/**
 * Opens the master key of a home for a command that needs it (vault, config secrets): reads
 * `keys/private.key`, asks for the passphrase only when the key is encrypted, checks it against
 * `keys/public.key`. Warns on stderr when the key is stored unencrypted.
 */
export async function openMasterSeed(ctx: CliContext, home: string): Promise<Uint8Array> {
  const file = orThrow(readPrivateKeyFile(home));
  const pub = orThrow(readPublicKeyHex(home));
  if (pub !== file.public_key) throw new CliError("keys/public.key and keys/private.key are not a pair (key_mismatch)");
  if (file.protection === "none") {
    printError(ctx, "warning: the private key is stored unencrypted (created with --no-passphrase)");
    return orThrow(unwrapPrivateKey(file, undefined));
  }
  const passphrase = await resolvePassphrase(ctx, false);
  const seed = unwrapPrivateKey(file, passphrase);
  if (!seed.ok && seed.issues[0]?.code === "key_passphrase_wrong") {
    throw new CliError("wrong passphrase, or keys/private.key is corrupted (key_passphrase_wrong)", EXIT.error);
  }
  return orThrow(seed);
}
