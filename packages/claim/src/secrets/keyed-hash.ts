import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Keyed hashing and sealing of secrets with the provider key; secrets are never stored in clear. */
export interface SecretBox {
  /** HMAC-SHA-256 of `kind` + `value` under the provider key, hex; the only form a secret is stored in. */
  hash(kind: string, value: string): string;
  /** Constant-time equality of two strings (of any length). */
  equal(a: string, b: string): boolean;
  /** An HMAC tag (hex, 128 bits) over `parts`, for signed challenges and CSRF tokens. */
  sign(...parts: string[]): string;
  /** AES-256-GCM seal of a value the owner must see again (the live handle), base64url. */
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
  const equal = (a: string, b: string): boolean => {
    const ha = createHmac("sha256", hashKey).update(a).digest();
    const hb = createHmac("sha256", hashKey).update(b).digest();
    return timingSafeEqual(ha, hb) && a.length === b.length;
  };
  return {
    hash: (kind, value) => createHmac("sha256", hashKey).update(`${kind}\0${value}`).digest("hex"),
    equal,
    sign: (...parts) => createHmac("sha256", signKey).update(parts.join("\0")).digest("hex").slice(0, 32),
    seal: (value) => {
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
