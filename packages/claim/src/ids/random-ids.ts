import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567";
const CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Uniform random string over `alphabet` (rejection sampling: no modulo bias). */
export function randomString(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= limit) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Bits of entropy of a uniform string of `length` symbols over an alphabet of `size`. */
export function entropyBits(size: number, length: number): number {
  return length * Math.log2(size);
}

/** Internal sandbox id: `sbx_` + 22 base62 (131 bits); never in a public URL. */
export function newSandboxId(): string {
  return `sbx_${randomString(BASE62, 22)}`;
}

/** An FAQ or question id (`faq_…`, `q_…`, 22 base62). */
export function newContentId(prefix: "faq" | "q"): string {
  return `${prefix}_${randomString(BASE62, 22)}`;
}

/**
 * Public handle: 26 symbols of lowercase base32 (130 bits). Lowercase because it is a DNS label
 * (`{handle}.pub.…`) and host names are case-insensitive: mixed-case base62 would not survive a browser.
 */
export function newPublicHandle(): string {
  return randomString(BASE32_LOWER, 26);
}

/** Whether a string has the shape of a public handle (a cheap pre-filter; not an existence check). */
export function isHandleShape(value: string): boolean {
  return /^[a-z2-7]{26}$/.test(value);
}

/** Agent bearer token: `acp_sbx_` + 43 base62 (256 bits). */
export function newAgentToken(): string {
  return `acp_sbx_${randomString(BASE62, 43)}`;
}

/** Session token for a cookie (256 bits). */
export function newSessionToken(): string {
  return randomString(BASE62, 43);
}

/** Preview exchange code: `acp_exch_` + 22 base62 (131 bits). */
export function newExchangeCode(): string {
  return `acp_exch_${randomString(BASE62, 22)}`;
}

/** Claim code: `ACP-XXXX-XXXX-XXXX-XXXX` over A–Z0–9 (16 symbols, 82.7 bits). */
export function newClaimCode(): string {
  const s = randomString(CODE_ALPHABET, 16);
  return `ACP-${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}`;
}

/**
 * What {@link normalizeClaimCode} gives for anything that is not a claim code. Every malformed input maps to it,
 * so it must never key a counter shared between callers (one sender's garbage would lock out everyone's typos).
 */
export const MALFORMED_CLAIM_CODE = "~invalid~";

/**
 * The canonical form of a typed claim code (case, spaces, dashes and the `ACP` prefix do not matter), or
 * {@link MALFORMED_CLAIM_CODE} for anything else, so a malformed code walks the same path as an unknown one.
 */
export function normalizeClaimCode(input: string): string {
  let s = input.toUpperCase().replace(/[\s-]/g, "");
  if (s.startsWith("ACP") && s.length === 19) s = s.slice(3);
  return /^[A-Z0-9]{16}$/.test(s) ? s : MALFORMED_CLAIM_CODE;
}

/** Entropy of each identifier, for docs and the compliance tests. */
export const IDENTIFIER_ENTROPY_BITS = {
  sandbox_id: entropyBits(62, 22),
  public_handle: entropyBits(32, 26),
  agent_token: entropyBits(62, 43),
  session: entropyBits(62, 43),
  exchange_code: entropyBits(62, 22),
  claim_code: entropyBits(36, 16),
} as const;
