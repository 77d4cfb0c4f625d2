import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";

/** DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
/** DER prefix of an SPKI Ed25519 public key; the 32 raw key bytes follow (RFC 8410). */
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Length of an Ed25519 seed (the private key) and of a raw public key. */
export const ED25519_KEY_BYTES = 32;

/** An Ed25519 key pair as node:crypto key objects, with the raw public key in lowercase hex. */
export interface Ed25519KeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** Raw 32-byte public key, 64 lowercase hex digits: what proofs carry in `public_key`. */
  readonly publicKeyHex: string;
}

/** Builds the key pair of a 32-byte Ed25519 seed. Throws when the seed is not 32 bytes. */
export function ed25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (seed.length !== ED25519_KEY_BYTES) {
    throw new RangeError(`ed25519 seed must be ${ED25519_KEY_BYTES} bytes, got ${seed.length}`);
  }
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
  const privateKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicKeyHex: publicKeyToHex(publicKey) };
}

/** A fresh Ed25519 seed from the injected random source (`crypto.randomBytes` fits). */
export function generateEd25519Seed(randomBytes: (size: number) => Uint8Array): Uint8Array {
  const seed = randomBytes(ED25519_KEY_BYTES);
  if (seed.length !== ED25519_KEY_BYTES) throw new RangeError("random source returned the wrong number of bytes");
  return seed;
}

/** The raw 32-byte public key of an Ed25519 key object, as 64 lowercase hex digits. */
export function publicKeyToHex(publicKey: KeyObject): string {
  const spki = publicKey.export({ format: "der", type: "spki" });
  return spki.subarray(SPKI_ED25519_PREFIX.length).toString("hex");
}

/** An Ed25519 public key object from 64 lowercase hex digits. Throws on any other input. */
export function publicKeyFromHex(hex: string): KeyObject {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new RangeError("public key must be 64 lowercase hex digits");
  return createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, Buffer.from(hex, "hex")]),
    format: "der",
    type: "spki",
  });
}

/** The PEM (SPKI) form of a raw public key, for `openssl pkeyutl -verify`. */
export function publicKeyHexToPem(hex: string): string {
  return publicKeyFromHex(hex).export({ format: "pem", type: "spki" }).toString();
}
