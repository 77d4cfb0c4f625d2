import { createHash } from "node:crypto";

/** The only proof-of-work algorithm: SHA-256 of UTF-8 `challenge + nonce` with ≥ difficulty leading zero bits. */
export const POW_ALGORITHM = "sha256_leading_zeros";

/** A valid nonce: 1–64 characters from [A-Za-z0-9]. */
export const POW_NONCE_PATTERN = /^[A-Za-z0-9]{1,64}$/;

/** Number of leading zero bits of a digest. */
export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

/** Whether `nonce` solves `challenge` at `difficulty` (shape checked first; never throws). */
export function checkPow(challenge: string, nonce: string, difficulty: number): boolean {
  if (typeof nonce !== "string" || !POW_NONCE_PATTERN.test(nonce)) return false;
  const digest = createHash("sha256")
    .update(challenge + nonce, "utf8")
    .digest();
  return leadingZeroBits(digest) >= difficulty;
}
