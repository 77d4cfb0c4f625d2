/**
 * Authority tokens: ephemeral, single-use, HMAC-SHA256-signed permissions for one call, bound to the plan step,
 * action, argument hash, intent version, plan hash, tenant and session. Pure functions; the session keeps the
 * registry of issued, used and revoked tokens.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "../canonical-json/index.js";
import type { SessionCode } from "./codes.js";

/** What a token asserts. */
export interface AuthorityTokenClaims {
  readonly v: 1;
  /** Random id (hex); the registry key. */
  readonly id: string;
  readonly tenant: string;
  readonly session: string;
  readonly intent_version: number;
  /** The approved plan's hash, or null in a session run by intent alone. */
  readonly plan_hash: string | null;
  /** The plan step index, or null without a plan. */
  readonly step: number | null;
  /** The action's primary name (`server.tool`). */
  readonly action: string;
  /** `sha256:` of the RFC 8785 form of the arguments. */
  readonly args_hash: string;
  /** Milliseconds since the epoch, from the injected clock. */
  readonly issued_at: number;
  readonly expires_at: number;
  /** Whether a person confirmed the call (it was routed ask). */
  readonly confirmed: boolean;
}

/** A signed token: the claims and a lowercase hex HMAC-SHA256 over their canonical JSON. */
export interface AuthorityToken extends AuthorityTokenClaims {
  readonly signature: string;
}

/** Shortest authority key accepted. */
export const MIN_AUTHORITY_KEY_BYTES = 32;

const CLAIM_KEYS = [
  "v",
  "id",
  "tenant",
  "session",
  "intent_version",
  "plan_hash",
  "step",
  "action",
  "args_hash",
  "issued_at",
  "expires_at",
  "confirmed",
] as const;

function mac(claims: AuthorityTokenClaims, key: Uint8Array): string {
  const body: Record<string, unknown> = {};
  for (const k of CLAIM_KEYS) body[k] = claims[k];
  return createHmac("sha256", key).update(canonicalJson(body)).digest("hex");
}

/** Signs claims with the key. */
export function signAuthorityToken(claims: AuthorityTokenClaims, key: Uint8Array): AuthorityToken {
  return Object.freeze({ ...claims, signature: mac(claims, key) });
}

function isClaims(value: Record<string, unknown>): boolean {
  const str = (k: string): boolean => typeof value[k] === "string" && value[k].length <= 1024;
  const int = (k: string): boolean => Number.isSafeInteger(value[k]);
  return (
    value["v"] === 1 &&
    str("id") &&
    str("tenant") &&
    str("session") &&
    int("intent_version") &&
    (value["plan_hash"] === null || str("plan_hash")) &&
    (value["step"] === null || int("step")) &&
    str("action") &&
    str("args_hash") &&
    int("issued_at") &&
    int("expires_at") &&
    typeof value["confirmed"] === "boolean" &&
    typeof value["signature"] === "string" &&
    /^[0-9a-f]{64}$/.test(value["signature"])
  );
}

/** The outcome of checking a token. */
export type TokenCheck =
  | { readonly ok: true; readonly token: AuthorityToken }
  | { readonly ok: false; readonly code: SessionCode; readonly message: string };

/** Reads a token from an object or its encoded string; anything else is `token_malformed`. */
export function readAuthorityToken(value: unknown): TokenCheck {
  let candidate = value;
  if (typeof value === "string") {
    const decoded = decodeAuthorityToken(value);
    if (decoded === undefined)
      return { ok: false, code: "token_malformed", message: "the authority token is not well formed" };
    candidate = decoded;
  }
  if (typeof candidate !== "object" || candidate === null || Array.isArray(candidate)) {
    return { ok: false, code: "token_malformed", message: "the authority token is not well formed" };
  }
  const record = candidate as Record<string, unknown>;
  const extra = Object.keys(record).filter((k) => k !== "signature" && !(CLAIM_KEYS as readonly string[]).includes(k));
  if (extra.length > 0 || !isClaims(record)) {
    return { ok: false, code: "token_malformed", message: "the authority token is not well formed" };
  }
  return { ok: true, token: record as unknown as AuthorityToken };
}

/** Checks a token's shape and signature (constant-time); `token_malformed` or `token_forged` otherwise. */
export function verifyAuthorityTokenSignature(value: unknown, key: Uint8Array): TokenCheck {
  const read = readAuthorityToken(value);
  if (!read.ok) return read;
  const expected = Buffer.from(mac(read.token, key), "hex");
  const given = Buffer.from(read.token.signature, "hex");
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { ok: false, code: "token_forged", message: "the authority token's signature does not verify" };
  }
  return read;
}

/** A token as one URL-safe string (base64url of its canonical JSON), for headers and wire formats. */
export function encodeAuthorityToken(token: AuthorityToken): string {
  return Buffer.from(canonicalJson(token), "utf8").toString("base64url");
}

/** The token object of an encoded string, or undefined when it is not base64url JSON (at most 8 KiB). */
export function decodeAuthorityToken(text: string): unknown {
  if (text.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    return JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
