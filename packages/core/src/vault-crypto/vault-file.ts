import { fail, ok, type Issue, type Result } from "../issues/index.js";
import {
  aesGcmOpen,
  aesGcmSeal,
  deriveKeyFromMaster,
  hexBytes,
  SALT_BYTES,
  TAG_BYTES,
  IV_BYTES,
  type RandomBytes,
} from "./aead.js";

/** `vault.json`, exactly the §2.3 shape. `data` is the hex ciphertext of the JSON of the entries. */
export interface VaultFileV1 {
  readonly version: 1;
  readonly encryption: "aes-256-gcm";
  /** HKDF salt, 16 bytes hex, fresh on every write. */
  readonly salt: string;
  /** GCM IV, 12 bytes hex, fresh on every write. */
  readonly iv: string;
  readonly data: string;
  /** GCM tag, 16 bytes hex. */
  readonly tag: string;
}

/** Name → secret value. */
export type VaultEntries = Readonly<Record<string, string>>;

/** HKDF `info` of the vault key. */
export const VAULT_KEY_INFO = "acp/vault/v1";
const VAULT_AAD = "acp vault.json v1 aes-256-gcm";
const VAULT_KEYS = ["version", "encryption", "salt", "iv", "data", "tag"];

/**
 * A vault entry name: a letter or `_`, then letters, digits, `_`, `.`, `-`; at most 128 characters; not
 * `__proto__`, the one name a plain object cannot hold as an entry (assigning it sets the prototype, so
 * the entry was dropped from the sealed vault without a word).
 */
export const VAULT_NAME_PATTERN = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** Whether a string can name a vault entry. */
export function isVaultName(name: string): boolean {
  return VAULT_NAME_PATTERN.test(name);
}

function issue({ code }: { code: string }, message: string): Issue {
  return { code, path: [], message };
}

/** Seals entries into a §2.3 vault file with a fresh salt and IV from `randomBytes`. */
export function sealVault(entries: VaultEntries, seed: Uint8Array, randomBytes: RandomBytes): VaultFileV1 {
  const salt = randomBytes(SALT_BYTES);
  const key = deriveKeyFromMaster(seed, salt, VAULT_KEY_INFO);
  const plain = new TextEncoder().encode(JSON.stringify(sortedEntries(entries)));
  const sealed = aesGcmSeal(key, plain, VAULT_AAD, randomBytes);
  return {
    version: 1,
    encryption: "aes-256-gcm",
    salt: Buffer.from(salt).toString("hex"),
    iv: Buffer.from(sealed.iv).toString("hex"),
    data: Buffer.from(sealed.ciphertext).toString("hex"),
    tag: Buffer.from(sealed.tag).toString("hex"),
  };
}

function sortedEntries(entries: VaultEntries): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(entries).sort()) out[name] = entries[name] ?? "";
  return out;
}

/**
 * Opens a parsed `vault.json`. A file of the wrong shape is `vault_malformed`; one that does not
 * decrypt with this key (another key, a flipped byte) is `vault_decrypt_failed`. Never throws.
 */
export function openVault(file: unknown, seed: Uint8Array): Result<VaultEntries> {
  if (file === null || typeof file !== "object" || Array.isArray(file))
    return fail([issue({ code: "vault_malformed" }, "vault is not a json object")]);
  const f = file as Record<string, unknown>;
  const unknown = Object.keys(f).filter((k) => !VAULT_KEYS.includes(k));
  if (unknown.length > 0) return fail([issue({ code: "vault_malformed" }, `unknown field \`${unknown[0] ?? ""}\``)]);
  if (f["version"] !== 1) return fail([issue({ code: "vault_malformed" }, "unsupported vault version (expected 1)")]);
  if (f["encryption"] !== "aes-256-gcm")
    return fail([issue({ code: "vault_malformed" }, "unsupported encryption (expected aes-256-gcm)")]);
  const salt = hexBytes(f["salt"], SALT_BYTES);
  const iv = hexBytes(f["iv"], IV_BYTES);
  const tag = hexBytes(f["tag"], TAG_BYTES);
  const data = hexBytes(f["data"]);
  if (salt === undefined || iv === undefined || tag === undefined || data === undefined) {
    return fail([issue({ code: "vault_malformed" }, "salt, iv, tag or data is not lowercase hex of the right length")]);
  }
  const plain = aesGcmOpen(deriveKeyFromMaster(seed, salt, VAULT_KEY_INFO), { iv, tag, ciphertext: data }, VAULT_AAD);
  if (plain === undefined) {
    return fail([
      issue(
        { code: "vault_decrypt_failed" },
        "vault does not decrypt with this key (corrupted, or sealed by another key)",
      ),
    ]);
  }
  return parseEntries(new TextDecoder().decode(plain));
}

function parseEntries(text: string): Result<VaultEntries> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail([issue({ code: "vault_malformed" }, "decrypted vault is not json")]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail([issue({ code: "vault_malformed" }, "decrypted vault is not an object of names to values")]);
  }
  const entries: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== "string" || !isVaultName(name))
      return fail([issue({ code: "vault_malformed" }, "decrypted vault holds an invalid entry")]);
    entries[name] = v;
  }
  return ok(entries);
}
