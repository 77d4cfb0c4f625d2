import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";

/** AES-256-GCM sizes: 12-byte IV, 16-byte tag, 32-byte key; HKDF salts are 16 bytes. */
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const KEY_BYTES = 32;
export const SALT_BYTES = 16;

/** A random source (`crypto.randomBytes` fits); injected so tests replay the same. */
export type RandomBytes = (size: number) => Uint8Array;

/** What AES-256-GCM produces. */
export interface Sealed {
  readonly iv: Uint8Array;
  readonly tag: Uint8Array;
  readonly ciphertext: Uint8Array;
}

/**
 * A 32-byte key from the Ed25519 private key (its 32-byte seed) by HKDF-SHA256, separated by purpose
 * through `info` (`acp/vault/v1`, `acp/config-secret/v1`) and by a random salt per write.
 */
export function deriveKeyFromMaster(seed: Uint8Array, salt: Uint8Array, info: string): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", seed, salt, info, KEY_BYTES));
}

/** Encrypts with AES-256-GCM under a fresh IV from `randomBytes`; `aad` is authenticated, not encrypted. */
export function aesGcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: string, randomBytes: RandomBytes): Sealed {
  const iv = randomBytes(IV_BYTES);
  if (iv.length !== IV_BYTES) throw new RangeError("random source returned the wrong number of bytes");
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

/** Decrypts AES-256-GCM; returns undefined when the key, IV, tag, AAD or ciphertext do not match. */
export function aesGcmOpen(key: Uint8Array, sealed: Sealed, aad: string): Uint8Array | undefined {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** Bytes from lowercase hex of an exact length in bytes, or undefined. */
export function hexBytes(value: unknown, bytes?: number): Uint8Array | undefined {
  if (typeof value !== "string" || !/^(?:[0-9a-f]{2})*$/.test(value)) return undefined;
  if (bytes !== undefined && value.length !== bytes * 2) return undefined;
  return Buffer.from(value, "hex");
}
