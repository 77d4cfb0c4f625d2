import { fail, ok, type Result } from "../issues/index.js";
import {
  aesGcmOpen,
  aesGcmSeal,
  deriveKeyFromMaster,
  IV_BYTES,
  SALT_BYTES,
  TAG_BYTES,
  type RandomBytes,
} from "./aead.js";

/** The prefix of a sealed value in `config.yml` (§8.1). */
export const SEALED_SECRET_PREFIX = "encrypted:";
/** HKDF `info` of the config-secret key. */
export const CONFIG_SECRET_KEY_INFO = "acp/config-secret/v1";
const FORMAT_VERSION = 1;

/** Whether a config value is a sealed secret (`encrypted:<base64>`). */
export function isSealedSecret(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(SEALED_SECRET_PREFIX);
}

/** A `NAME: sealed token` mapping of config.yml, read ({@link readNamedSecrets}). */
export interface NamedSecrets {
  /** The names with a sealed value, in file order, and their sealed text (never opened here). */
  readonly sealed: Readonly<Record<string, string>>;
  /** What is wrong, one entry per bad name or value: its path under the section and a message naming it. */
  readonly problems: readonly { readonly path: readonly string[]; readonly message: string }[];
}

/**
 * Reads a `NAME: sealed token` mapping (`proxy.agent_tokens`, `serve.agent_tokens`, `serve.approver_tokens`):
 * each name must match `names` (lowercase letters, digits and _), each value be the sealed text `acp config
 * set-secret` writes; an empty value is a token not set yet (skipped, like an empty `bearer_token`). `key` is
 * the mapping's dotted path (`proxy.agent_tokens`), `who` what a name names (`agent`, `approver`, or `key`:
 * `serve.trusted_channel_keys`, key id → sealed trusted-channel key).
 */
export function readNamedSecrets(
  value: unknown,
  key: string,
  who: "agent" | "approver" | "key",
  names: RegExp,
): NamedSecrets {
  const sealed: Record<string, string> = {};
  const problems: { path: string[]; message: string }[] = [];
  if (value === undefined || value === null) return { sealed, problems };
  if (typeof value !== "object" || Array.isArray(value)) {
    problems.push({
      path: [],
      message: `\`${key}\` must be a mapping of ${who === "key" ? "key id to sealed key" : `${who} name to sealed token`}`,
    });
    return { sealed, problems };
  }
  for (const [name, token] of Object.entries(value)) {
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    if (!names.test(name)) {
      problems.push({
        path: [shown],
        message: `\`${key}.${shown}\`: ${{ agent: "an agent name", approver: "an approver name", key: "a key id" }[who]} is lowercase letters, digits and _ (at most 64), starting with a letter or _`,
      });
    } else if (token === "" || token === null) {
      continue;
    } else if (!isSealedSecret(token)) {
      problems.push({
        path: [name],
        message: `\`${key}.${name}\` must be the sealed text \`acp config set-secret ${key}.${name}\` writes`,
      });
    } else sealed[name] = token;
  }
  return { sealed, problems };
}

/**
 * Seals a config secret as `encrypted:<base64>`: base64 of version byte 1, 16-byte HKDF salt, 12-byte
 * IV, 16-byte tag, ciphertext. The key comes from the master key (HKDF-SHA256); the config path (for
 * example `telegram.bot_token`) is authenticated, so a sealed value moved to another key does not open.
 */
export function sealConfigSecret(value: string, path: string, seed: Uint8Array, randomBytes: RandomBytes): string {
  const salt = randomBytes(SALT_BYTES);
  const key = deriveKeyFromMaster(seed, salt, CONFIG_SECRET_KEY_INFO);
  const sealed = aesGcmSeal(key, new TextEncoder().encode(value), `config:${path}`, randomBytes);
  const blob = Buffer.concat([Buffer.from([FORMAT_VERSION]), salt, sealed.iv, sealed.tag, sealed.ciphertext]);
  return SEALED_SECRET_PREFIX + blob.toString("base64");
}

/** Opens an `encrypted:<base64>` config value sealed for `path`. Never throws; never echoes the value. */
export function openConfigSecret(text: string, path: string, seed: Uint8Array): Result<string> {
  const bad = ({ code }: { code: string }, message: string): Result<string> =>
    fail([{ code, path: path.split("."), message: `\`${path}\`: ${message}` }]);
  if (!isSealedSecret(text)) return bad({ code: "config_secret_malformed" }, "not an `encrypted:` value");
  const b64 = text.slice(SEALED_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64))
    return bad({ code: "config_secret_malformed" }, "not base64 after `encrypted:`");
  const blob = Buffer.from(b64, "base64");
  const head = 1 + SALT_BYTES + IV_BYTES + TAG_BYTES;
  if (blob.length < head || blob[0] !== FORMAT_VERSION)
    return bad({ code: "config_secret_malformed" }, "truncated or unknown format");
  const salt = blob.subarray(1, 1 + SALT_BYTES);
  const iv = blob.subarray(1 + SALT_BYTES, 1 + SALT_BYTES + IV_BYTES);
  const tag = blob.subarray(1 + SALT_BYTES + IV_BYTES, head);
  const key = deriveKeyFromMaster(seed, salt, CONFIG_SECRET_KEY_INFO);
  const plain = aesGcmOpen(key, { iv, tag, ciphertext: blob.subarray(head) }, `config:${path}`);
  if (plain === undefined)
    return bad(
      { code: "config_secret_decrypt_failed" },
      "does not decrypt with this key (corrupted, moved, or sealed by another key)",
    );
  return ok(new TextDecoder().decode(plain));
}
