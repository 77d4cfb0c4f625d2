import { hash } from "node:crypto";
import { canonicalJsonBytes } from "./canonical-json.js";

/** The prefix of every hash reference ACP writes: `sha256:<64 lowercase hex>`. */
export const SHA256_PREFIX = "sha256:";

const SHA256_REF = /^sha256:[0-9a-f]{64}$/;

/**
 * Lowercase hex SHA-256 of the bytes (a string is hashed as its UTF-8 bytes). One-shot `crypto.hash`
 * (Node >= 20.12): the same digest as a `createHash` object, without building one (about 2.5x cheaper
 * for short inputs).
 */
export function sha256Hex(data: Uint8Array | string): string {
  return hash("sha256", data, "hex");
}

/** `sha256:` + lowercase hex SHA-256 of the bytes (a string is hashed as its UTF-8 bytes). */
export function sha256Ref(data: Uint8Array | string): string {
  return SHA256_PREFIX + sha256Hex(data);
}

/** `sha256:` + lowercase hex SHA-256 of the RFC 8785 canonical JSON of the value. Throws on non-JSON input. */
export function canonicalSha256Ref(value: unknown): string {
  return sha256Ref(canonicalJsonBytes(value));
}

/** Whether a value is exactly `sha256:` followed by 64 lowercase hex digits (upper case is refused). */
export function isSha256Ref(value: unknown): value is string {
  return typeof value === "string" && SHA256_REF.test(value);
}
