/**
 * Issuer-attested admission (§11.1 "external issuer / agent registration token", §11.2 "PoW MUST NOT be the only
 * long-term admission control"). An issuer the operator trusts signs a compact statement about one agent:
 *
 *   header  {"typ":"acp-admission+jwt","alg":"EdDSA","kid":<issuer key id>}
 *   payload {"iss":<kid>,"sub":<agent id>,"aud":<provider API origin>,"iat":s,"exp":s,"jti":<nonce>,"max_uses"?:n}
 *
 * as `base64url(header).base64url(payload).base64url(Ed25519 signature)` (a JWS, RFC 7515). The provider accepts
 * it for at most `max_uses` sandbox creations (default 1): each use is spent in the transaction that creates the
 * sandbox, so a token is single use (or usage limited) across every node sharing the store.
 */
import { createPublicKey, generateKeyPairSync, sign, verify, type JsonWebKey, type KeyObject } from "node:crypto";
import { jwkThumbprint } from "../secrets/dpop.js";

/** The `typ` of an admission token. */
export const ADMISSION_TOKEN_TYPE = "acp-admission+jwt";
/** The HTTP header an agent sends its token in (on the challenge request and on the creation request). */
export const ADMISSION_TOKEN_HEADER = "acp-admission-token";
/** The most uses one token may grant. */
export const MAX_TOKEN_USES = 10_000;

/** An issuer the provider trusts: its key id and Ed25519 public key. */
export interface TrustedIssuer {
  /** The key id (`kid`); by convention the RFC 7638 thumbprint of the public key. */
  readonly kid: string;
  /** The Ed25519 public key, base64url of its 32 bytes (the JWK `x`). */
  readonly publicKey: string;
  /** A name shown in discovery. */
  readonly name?: string;
}

/** What a valid token states. */
export interface AdmissionClaims {
  readonly kid: string;
  readonly sub: string;
  readonly jti: string;
  /** Expiry, epoch ms. */
  readonly expiresAt: number;
  readonly maxUses: number;
}

/** Why a token was refused (for tests and logs; the wire answer is always the one failure). */
export type TokenRefusal =
  | "malformed"
  | "unknown_issuer"
  | "bad_signature"
  | "wrong_audience"
  | "expired"
  | "not_yet_valid"
  | "too_long_lived"
  | "bad_claims";

/** Options of {@link verifyAdmissionToken}. */
export interface VerifyTokenOptions {
  readonly issuers: ReadonlyMap<string, KeyObject>;
  /** The audiences this provider answers to (its API origin, or the configured audience). */
  readonly audience: readonly string[];
  readonly nowMs: number;
  /** Tokens valid for longer than this from now are refused (bounds the spent-token table). */
  readonly maxLifetimeMs: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const b64u = (b: Buffer | string): string => Buffer.from(b).toString("base64url");
const SKEW_S = 60;

/** Builds the key map of {@link VerifyTokenOptions} from configured issuers; throws on a key that is not Ed25519. */
export function issuerKeys(issuers: readonly TrustedIssuer[]): Map<string, KeyObject> {
  const map = new Map<string, KeyObject>();
  for (const i of issuers) {
    if (!/^[A-Za-z0-9_-]{43}$/.test(i.publicKey))
      throw new Error(`issuer \`${i.kid}\`: public_key must be 43 base64url characters (32 bytes of Ed25519)`);
    map.set(i.kid, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: i.publicKey }, format: "jwk" }));
  }
  return map;
}

/** Verifies a token: structure, known issuer, Ed25519 signature, audience, expiry, lifetime, claims. Never throws. */
export function verifyAdmissionToken(
  token: string,
  o: VerifyTokenOptions,
): { ok: true; claims: AdmissionClaims } | { ok: false; reason: TokenRefusal } {
  const no = (reason: TokenRefusal): { ok: false; reason: TokenRefusal } => ({ ok: false, reason });
  try {
    const parts = token.split(".");
    if (parts.length !== 3 || token.length > 4096) return no("malformed");
    const [h, p, s] = parts as [string, string, string];
    const header: unknown = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
    const payload: unknown = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
    if (!isObj(header) || !isObj(payload) || header["typ"] !== ADMISSION_TOKEN_TYPE || header["alg"] !== "EdDSA")
      return no("malformed");
    const kid = header["kid"];
    const key = typeof kid === "string" ? o.issuers.get(kid) : undefined;
    if (key === undefined || typeof kid !== "string") return no("unknown_issuer");
    if (!verify(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, "base64url"))) return no("bad_signature");
    const aud = payload["aud"];
    const auds = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!auds.some((a) => typeof a === "string" && o.audience.includes(a))) return no("wrong_audience");
    const { exp, iat, nbf, sub, jti } = payload;
    const uses = payload["max_uses"] ?? 1;
    if (typeof exp !== "number" || exp * 1000 <= o.nowMs) return no("expired");
    if (
      (typeof nbf === "number" && nbf - SKEW_S > o.nowMs / 1000) ||
      (typeof iat === "number" && iat - SKEW_S > o.nowMs / 1000)
    )
      return no("not_yet_valid");
    if (exp * 1000 - o.nowMs > o.maxLifetimeMs) return no("too_long_lived");
    if (
      (payload["iss"] !== undefined && payload["iss"] !== kid) ||
      typeof sub !== "string" ||
      !/^[\x21-\x7e]{1,200}$/.test(sub) ||
      typeof jti !== "string" ||
      !/^[\x21-\x7e]{16,128}$/.test(jti) ||
      typeof uses !== "number" ||
      !Number.isInteger(uses) ||
      uses < 1 ||
      uses > MAX_TOKEN_USES
    )
      return no("bad_claims");
    // A NumericDate may have a fraction (RFC 7519 §2); the store keeps whole milliseconds.
    return { ok: true, claims: { kid, sub, jti, expiresAt: Math.ceil(exp * 1000), maxUses: uses } };
  } catch {
    return no("malformed");
  }
}

/** An issuer's key pair: the private JWK (keep it secret) and what the provider configures. */
export interface IssuerKey {
  readonly kid: string;
  readonly publicKey: string;
  readonly privateJwk: JsonWebKey;
}

/** A new Ed25519 issuer key; `kid` is the RFC 7638 thumbprint of the public key. */
export function newIssuerKey(): IssuerKey {
  const privateJwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
  return issuerKeyOf(privateJwk);
}

/** The issuer key of a private Ed25519 JWK; throws when it is not one. */
export function issuerKeyOf(privateJwk: JsonWebKey): IssuerKey {
  if (privateJwk.kty !== "OKP" || privateJwk.crv !== "Ed25519" || typeof privateJwk.x !== "string" || !privateJwk.d)
    throw new Error("not an Ed25519 private key (JWK with kty OKP, crv Ed25519, x and d)");
  const kid = jwkThumbprint({ kty: "OKP", crv: "Ed25519", x: privateJwk.x });
  if (kid === undefined) throw new Error("not an Ed25519 key");
  return { kid, publicKey: privateJwk.x, privateJwk };
}

/** What {@link signAdmissionToken} puts in a token. */
export interface TokenRequest {
  readonly subject: string;
  readonly audience: string;
  readonly nowMs: number;
  readonly ttlMs: number;
  readonly jti: string;
  readonly maxUses?: number;
}

/** Signs an admission token with an issuer key (the issuer side: `acp claim issuer issue`). */
export function signAdmissionToken(key: IssuerKey, r: TokenRequest): string {
  const header = b64u(JSON.stringify({ typ: ADMISSION_TOKEN_TYPE, alg: "EdDSA", kid: key.kid }));
  const iat = Math.floor(r.nowMs / 1000);
  const payload = b64u(
    JSON.stringify({
      iss: key.kid,
      sub: r.subject,
      aud: r.audience,
      iat,
      exp: iat + Math.max(1, Math.floor(r.ttlMs / 1000)),
      jti: r.jti,
      ...(r.maxUses === undefined || r.maxUses === 1 ? {} : { max_uses: r.maxUses }),
    }),
  );
  const sig = sign(null, Buffer.from(`${header}.${payload}`), { key: key.privateJwk, format: "jwk" });
  return `${header}.${payload}.${b64u(sig)}`;
}
