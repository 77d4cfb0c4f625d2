import fc from "fast-check";

/** A distinctive secret value: nothing else in a generated document contains it by chance. */
export const canary = fc
  .stringMatching(/^[A-Za-z0-9]{16,24}$/)
  .map((s) => `Cn${s}`)
  .filter((s) => !/redacted/i.test(s));

/** A key name the default rules hide: a secret-ish word, any case, with a prefix and suffix. */
export const secretKeyName = fc
  .tuple(
    fc.constantFrom(
      "token",
      "password",
      "passwd",
      "secret",
      "authorization",
      "api_key",
      "apikey",
      "cookie",
      "private_key",
      "passphrase",
    ),
    fc.stringMatching(/^[a-z_]{0,6}$/),
    fc.stringMatching(/^[a-z_]{0,6}$/),
    fc.boolean(),
  )
  .map(([word, pre, post, upper]) => {
    const name = `${pre}${word}${post}`;
    return upper ? name.toUpperCase() : name;
  });

const alnum = (min: number, max: number): fc.Arbitrary<string> =>
  fc.stringMatching(new RegExp(`^[A-Za-z0-9]{${min},${max}}$`));
const b64url = (min: number, max: number): fc.Arbitrary<string> =>
  fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{${min},${max}}$`));

/**
 * A secret-shaped value and the part of it that must never survive: GitHub, OpenAI-style, Slack and AWS
 * keys, JWTs, bearer credentials, a URL's password, PEM private keys.
 */
export const secretShapedValue: fc.Arbitrary<{ readonly text: string; readonly secret: string }> = fc.oneof(
  alnum(36, 40).map((s) => ({ text: `ghp_${s}`, secret: s })),
  b64url(20, 40).map((s) => ({ text: `sk-${s}`, secret: s })),
  fc.stringMatching(/^[A-Za-z0-9-]{12,30}$/).map((s) => ({ text: `xoxb-${s}`, secret: s })),
  fc.stringMatching(/^[0-9A-Z]{16}$/).map((s) => ({ text: `AKIA${s}`, secret: s })),
  fc
    .tuple(b64url(10, 30), b64url(10, 60), b64url(20, 43))
    .map(([h, p, s]) => ({ text: `eyJ${h}.${p}.${s}`, secret: `${p}.${s}` })),
  b64url(16, 40).map((s) => ({ text: `Bearer ${s}`, secret: s })),
  alnum(8, 30).map((s) => ({ text: `postgres://acp:${s}@db.internal:5432/acp`, secret: s })),
  alnum(8, 30).map((s) => ({ text: `https://bob:${s}@example.com/hook?x=1`, secret: s })),
  fc
    .base64String({ minLength: 40, maxLength: 120 })
    .filter((s) => s.length >= 40)
    .map((s) => ({
      text: `-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----`,
      secret: s,
    })),
);

/** Harmless surrounding text (words and spaces) to put before or after a planted value. */
export const filler = fc.stringMatching(/^[a-z ]{0,20}$/);

/**
 * Puts `planted` (a whole value) under `key` inside a random JSON document, at some depth, next to other
 * data: `{ data, box: { level: [{ [key]: planted }] } }`.
 */
export function plantIn(doc: unknown, key: string, planted: unknown): Record<string, unknown> {
  return { data: doc, box: { level: [{ [key]: planted, plain: "ok" }] } };
}
