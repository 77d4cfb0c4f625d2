/**
 * DPoP (RFC 9449) proof-of-possession for agent tokens (§20.1 SHOULD): an agent that sends a `DPoP` proof when
 * it creates its sandbox gets a token bound to that key (`token_type: "DPoP"`); every later request must carry
 * `Authorization: DPoP <token>` and a fresh proof signed by the same key for that method and URL. A leaked token
 * alone is useless. Supported: EdDSA (Ed25519) and ES256 (P-256).
 */
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
  type JsonWebKey,
} from "node:crypto";
import { hasLoneSurrogate } from "../content/faq.js";

/** Proofs older or newer than this (seconds) are refused. */
export const DPOP_MAX_SKEW_S = 60;

/** The algorithms accepted (advertised in discovery). */
export const DPOP_ALGORITHMS = ["EdDSA", "ES256"] as const;

const b64u = (b: Buffer | string): string => Buffer.from(b).toString("base64url");
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7638 thumbprint of a public JWK (the key a token is bound to); undefined for an unsupported key. */
export function jwkThumbprint(jwk: Record<string, unknown>): string | undefined {
  const str = (k: string): string | undefined => (typeof jwk[k] === "string" ? jwk[k] : undefined);
  let members: string | undefined;
  if (jwk["kty"] === "OKP" && jwk["crv"] === "Ed25519" && str("x") !== undefined)
    members = JSON.stringify({ crv: "Ed25519", kty: "OKP", x: str("x") });
  if (jwk["kty"] === "EC" && jwk["crv"] === "P-256" && str("x") !== undefined && str("y") !== undefined)
    members = JSON.stringify({ crv: "P-256", kty: "EC", x: str("x"), y: str("y") });
  return members === undefined ? undefined : b64u(createHash("sha256").update(members).digest());
}

/** Where proof ids are spent: `once` is false for an id seen within the proof window (a replay). */
export interface DpopReplay {
  once(id: string, nowMs: number): boolean | Promise<boolean>;
}

/**
 * How long a proof id is remembered from its use: longer than the proof can be valid. A proof is good while `now` is
 * within ±{@link DPOP_MAX_SKEW_S} of its `iat`, bounds included, so one used at the earliest (dated the whole skew
 * ahead) is good for two skews and a millisecond: remembered exactly two skews, it was valid again, and forgotten
 * (by this cache and by the store's sweep), at that last millisecond. A second more covers it.
 */
export const DPOP_REMEMBER_MS = (2 * DPOP_MAX_SKEW_S + 1) * 1000;

/** Remembers proof ids for the skew window so a proof is accepted once by this process. */
export class DpopReplayCache implements DpopReplay {
  private readonly seen = new Map<string, number>();
  private pruneAt = 100_000;

  /** False when `jti` was seen within the window; records it otherwise. */
  once(jti: string, nowMs: number): boolean {
    const until = this.seen.get(jti);
    if (until !== undefined && until > nowMs) return false;
    this.seen.set(jti, nowMs + DPOP_REMEMBER_MS);
    // Amortised, as the rate-limit counters: a sweep per new id past the bound scanned every live one.
    if (this.seen.size > this.pruneAt) {
      for (const [k, t] of this.seen) if (t <= nowMs) this.seen.delete(k);
      this.pruneAt = Math.max(100_000, 2 * this.seen.size);
    }
    return true;
  }
}

/**
 * Proof ids spent once across every node on one store: this process's cache first (a replay here costs no
 * query), then `spend` (the store's single-use record, shared by the nodes), so a proof captured on its way
 * to node A is refused on node B too. A `spend` that fails refuses the proof.
 */
export class SharedDpopReplay implements DpopReplay {
  constructor(
    private readonly local: DpopReplayCache,
    private readonly spend: (id: string, untilMs: number) => Promise<boolean>,
  ) {}

  async once(id: string, nowMs: number): Promise<boolean> {
    if (!this.local.once(id, nowMs)) return false;
    return this.spend(id, nowMs + DPOP_REMEMBER_MS);
  }
}

/** The `ath` of a proof sent with `token` (RFC 9449 §4.2): base64url of the SHA-256 of the token's ASCII. */
export function accessTokenHash(token: string): string {
  return b64u(createHash("sha256").update(token, "ascii").digest());
}

/** What {@link verifyDpopProof} found: the key's thumbprint, or why the proof was refused. */
export type DpopVerification =
  { readonly ok: true; readonly jkt: string } | { readonly ok: false; readonly reason: "invalid" | "replayed" };

/**
 * Verifies a DPoP proof for `method` and `url` (scheme, host and path; no query): its `typ`, algorithm, public
 * JWK, signature, `htm`, `htu`, `iat` within {@link DPOP_MAX_SKEW_S} and a `jti` not seen before, which it spends.
 * `replayed` when the proof is good but its `jti` was already spent (a proof is good for one request: RFC 9449
 * §11.1), `invalid` for anything else, a failure to record it included (never throws). For a proof that comes
 * with no access token (a creation).
 */
export async function verifyDpopProof(
  proof: string,
  method: string,
  url: string,
  nowMs: number,
  replay: DpopReplay,
): Promise<DpopVerification> {
  const checked = checkDpopProof(proof, method, url, nowMs);
  if (checked === undefined) return { ok: false, reason: "invalid" };
  try {
    return (await replay.once(checked.replayId, nowMs))
      ? { ok: true, jkt: checked.jkt }
      : { ok: false, reason: "replayed" };
  } catch {
    return { ok: false, reason: "invalid" };
  }
}

/**
 * {@link verifyDpopProof} without spending the proof: the key's thumbprint and the id to spend
 * (`DpopReplay.once`) once the caller knows the proof is worth recording — after its token was found, so that
 * proofs sent with unknown tokens write nothing to the shared store. With `accessToken` (the token the proof
 * comes with) the proof's `ath` must be that token's hash ({@link accessTokenHash}; RFC 9449 §4.3): a proof made
 * for one token of a key serves no other token of that key. Undefined for any failure (never throws).
 */
export function checkDpopProof(
  proof: string,
  method: string,
  url: string,
  nowMs: number,
  accessToken?: string,
): { readonly jkt: string; readonly replayId: string } | undefined {
  try {
    const parts = proof.split(".");
    if (parts.length !== 3 || proof.length > 4096) return undefined;
    const [h, p, s] = parts as [string, string, string];
    const header: unknown = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
    const payload: unknown = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
    if (!isObj(header) || !isObj(payload) || header["typ"] !== "dpop+jwt" || !isObj(header["jwk"])) return undefined;
    const jwk = header["jwk"];
    if ("d" in jwk) return undefined; // a private key in a proof is refused outright
    const jkt = jwkThumbprint(jwk);
    if (jkt === undefined) return undefined;
    const key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
    const data = Buffer.from(`${h}.${p}`);
    const sig = Buffer.from(s, "base64url");
    const ok =
      header["alg"] === "EdDSA" && jwk["kty"] === "OKP"
        ? verify(null, data, key, sig)
        : header["alg"] === "ES256" && jwk["kty"] === "EC"
          ? verify("sha256", data, { key, dsaEncoding: "ieee-p1363" }, sig)
          : false;
    const iat = payload["iat"];
    const jti = payload["jti"];
    if (
      !ok ||
      payload["htm"] !== method ||
      payload["htu"] !== url ||
      (accessToken !== undefined && payload["ath"] !== accessTokenHash(accessToken)) ||
      typeof iat !== "number" ||
      Math.abs(iat - nowMs / 1000) > DPOP_MAX_SKEW_S ||
      typeof jti !== "string" ||
      jti.length < 8 ||
      jti.length > 128 ||
      // Its id is spent as a keyed hash, which takes well-formed text only (`LoneSurrogateError`): JSON can carry a
      // lone surrogate, UTF-8 cannot.
      hasLoneSurrogate(jti)
    )
      return undefined;
    return { jkt, replayId: `${jkt}:${jti}` };
  } catch {
    return undefined;
  }
}

/** An agent's DPoP key: the private JWK (keep it with the token, as secret as the token). */
export interface DpopKey {
  readonly privateJwk: JsonWebKey;
}

/** A new Ed25519 DPoP key. */
export function newDpopKey(): DpopKey {
  return { privateJwk: generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }) };
}

/**
 * Signs a DPoP proof for one request (`url` without query) with `key` at `nowMs`; with `accessToken` (every call
 * but the creation) its hash goes in `ath`.
 */
export function dpopProof(key: DpopKey, method: string, url: string, nowMs: number, accessToken?: string): string {
  const { d: _d, ...pub } = key.privateJwk;
  void _d;
  const header = b64u(JSON.stringify({ typ: "dpop+jwt", alg: "EdDSA", jwk: { kty: pub.kty, crv: pub.crv, x: pub.x } }));
  const payload = b64u(
    JSON.stringify({
      htm: method,
      htu: url,
      iat: Math.floor(nowMs / 1000),
      jti: randomBytes(16).toString("hex"),
      ...(accessToken === undefined ? {} : { ath: accessTokenHash(accessToken) }),
    }),
  );
  const priv = { key: key.privateJwk, format: "jwk" } as const;
  return `${header}.${payload}.${b64u(sign(null, Buffer.from(`${header}.${payload}`), priv))}`;
}
