import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Text with a lone surrogate given to {@link SecretBox} `hash`, `sign` or `seal`. Their input is encoded as UTF-8,
 * which has no form for a lone surrogate and would silently write U+FFFD instead: `x\uD800` and `x\uFFFD` (or
 * `x\uDBFF`) would hash, sign and seal alike. A caller passes only well-formed text (every route checks what it
 * takes from a request first); this is the guard behind that, never an answer to a client.
 */
export class LoneSurrogateError extends Error {
  /** Stable code (docs/reference/errors.md). */
  readonly code = "claim_lone_surrogate";
  constructor(operation: string, what: string, index: number) {
    super(
      `secret box: refused to ${operation} ${what}: it holds a lone surrogate at index ${index} (UTF-8 would turn it into U+FFFD, so different texts would ${operation} alike)`,
    );
    this.name = "LoneSurrogateError";
  }
}

/** A lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws {@link LoneSurrogateError} for text with a lone surrogate (its position only: the text may be a secret). */
function assertWellFormed(operation: string, what: string, text: string): void {
  const m = LONE_SURROGATE.exec(text);
  if (m !== null) throw new LoneSurrogateError(operation, what, m.index);
}

/** Keyed hashing and sealing of secrets with the provider key; secrets are never stored in clear. */
export interface SecretBox {
  /**
   * HMAC-SHA-256 of `kind` + `value` under the provider key, hex; the only form a secret is stored in. Throws
   * {@link LoneSurrogateError} for a `kind` or `value` with a lone surrogate.
   */
  hash(kind: string, value: string): string;
  /**
   * Constant-time equality of two strings (of any length), code unit for code unit: a lone surrogate equals only
   * itself (never U+FFFD, nor another lone surrogate). Never throws: it compares a secret with what a request sent.
   */
  equal(a: string, b: string): boolean;
  /** An HMAC tag (hex, 128 bits) over `parts`, for signed challenges and CSRF tokens. Throws as `hash` does. */
  sign(...parts: string[]): string;
  /** AES-256-GCM seal of a value the owner must see again (the live handle), base64url. Throws as `hash` does. */
  seal(value: string): string;
  /** Opens {@link seal}'s output; undefined when it was tampered with. */
  open(sealed: string): string | undefined;
}

/** Builds a {@link SecretBox} from a 32-byte provider key (sub-keys derived per use). */
export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length < 32) throw new Error("claim provider key must be at least 32 bytes");
  const sub = (label: string): Buffer => createHmac("sha256", key).update(label).digest();
  const hashKey = sub("acp-claim/hash");
  const signKey = sub("acp-claim/sign");
  const sealKey = sub("acp-claim/seal");
  // UTF-16 code units, not UTF-8: every string has one exact form, lone surrogates included.
  const equal = (a: string, b: string): boolean => {
    const ha = createHmac("sha256", hashKey).update(Buffer.from(a, "utf16le")).digest();
    const hb = createHmac("sha256", hashKey).update(Buffer.from(b, "utf16le")).digest();
    return timingSafeEqual(ha, hb) && a.length === b.length;
  };
  return {
    hash: (kind, value) => {
      assertWellFormed("hash", "a kind", kind);
      assertWellFormed("hash", `a \`${kind}\` value`, value);
      return createHmac("sha256", hashKey).update(`${kind}\0${value}`).digest("hex");
    },
    equal,
    sign: (...parts) => {
      parts.forEach((part, i) => assertWellFormed("sign", `part ${i + 1}`, part));
      return createHmac("sha256", signKey).update(parts.join("\0")).digest("hex").slice(0, 32);
    },
    seal: (value) => {
      assertWellFormed("seal", "a value", value);
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", sealKey, iv);
      const body = Buffer.concat([c.update(value, "utf8"), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]).toString("base64url");
    },
    open: (sealed) => {
      try {
        const raw = Buffer.from(sealed, "base64url");
        const d = createDecipheriv("aes-256-gcm", sealKey, raw.subarray(0, 12));
        d.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
      } catch {
        return undefined;
      }
    },
  };
}
