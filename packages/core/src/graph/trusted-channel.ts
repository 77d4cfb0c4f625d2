/**
 * Trusted-channel attestations: HMAC-SHA256, with a configured shared key, over the RFC 8785 canonical
 * JSON of the signed statement (see `trustedChannelStatement`), as lowercase hex, checked in constant time
 * and within a timestamp window around the injected clock.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";
import type { GraphProposal, TrustedChannelAttestation } from "../request/index.js";
import type { GraphCall, GraphReason } from "./types.js";

/** The version tag inside every signed statement. */
export const TRUSTED_CHANNEL_VERSION = "acp-trusted-channel/1";
/** Default allowed distance between an attestation's timestamp and the clock, in seconds. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 300;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const HEX_HMAC = /^[0-9a-f]{64}$/;

/** What an attestation vouches for: the graph coordinates, the proposal and (for a tool call) the call. */
export interface TrustedChannelSubject {
  readonly domain: string;
  readonly action: string;
  readonly proposal?: GraphProposal;
  readonly call?: GraphCall;
}

/**
 * The statement that is signed, exactly:
 * `{v, key_id, timestamp, domain, action, proposal?, call?}` where `v` is `acp-trusted-channel/1`,
 * `proposal` is `{diff?, undo?, proposed_at?}` (omitted when the target has none) and `call` is
 * `{tool, server?, arguments}` (omitted when the target did not come from a tool call).
 */
export function trustedChannelStatement(subject: TrustedChannelSubject, keyId: string, timestamp: string): string {
  const statement: Record<string, unknown> = {
    v: TRUSTED_CHANNEL_VERSION,
    key_id: keyId,
    timestamp,
    domain: subject.domain,
    action: subject.action,
  };
  if (subject.proposal !== undefined) {
    const { diff, undo, proposed_at } = subject.proposal;
    statement["proposal"] = { diff, undo, proposed_at };
  }
  if (subject.call !== undefined) {
    const { tool, server, arguments: args } = subject.call;
    statement["call"] = { tool, server, arguments: args };
  }
  return canonicalJson(statement);
}

function hmacHex(secret: string, statement: string): string {
  return createHmac("sha256", Buffer.from(secret, "utf8")).update(statement, "utf8").digest("hex");
}

/** Input to `createTrustedChannelAttestation`. */
export interface CreateAttestationInput extends TrustedChannelSubject {
  readonly keyId: string;
  /** The shared secret configured for `keyId` (UTF-8). */
  readonly secret: string;
  /** When the attestation is made (the caller's clock). */
  readonly timestamp: Date;
}

/** Signs a subject for the trusted channel (for the channel's sender, and for tests). */
export function createTrustedChannelAttestation(input: CreateAttestationInput): TrustedChannelAttestation {
  if (input.secret.length === 0) throw new Error("empty trusted-channel secret");
  const timestamp = input.timestamp.toISOString();
  return {
    key_id: input.keyId,
    timestamp,
    hmac: hmacHex(input.secret, trustedChannelStatement(input, input.keyId, timestamp)),
  };
}

/** Options for `verifyTrustedChannelAttestation`. */
export interface VerifyAttestationOptions {
  readonly keys: Readonly<Record<string, string>> | undefined;
  readonly now: Date;
  readonly clockSkewSeconds?: number;
}

function refusal(code: string, message: string): GraphReason {
  return { code, message };
}

/**
 * Checks an attestation for a subject. Returns null when it is valid, else the reason it is not.
 * Never throws.
 */
export function verifyTrustedChannelAttestation(
  attestation: TrustedChannelAttestation | undefined,
  subject: TrustedChannelSubject,
  options: VerifyAttestationOptions,
): GraphReason | null {
  const what = `\`${subject.domain}.${subject.action}\``;
  if (attestation === undefined) {
    return refusal(
      "trusted_channel_required",
      `${what} is only valid through the signed trusted channel, and this request has no attestation`,
    );
  }
  try {
    const { key_id, timestamp, hmac } = attestation;
    if (typeof key_id !== "string" || typeof timestamp !== "string" || typeof hmac !== "string") {
      return refusal("attestation_invalid", `the trusted-channel attestation for ${what} is malformed`);
    }
    const keys = options.keys ?? {};
    const secret = Object.hasOwn(keys, key_id) ? keys[key_id] : undefined;
    if (typeof secret !== "string" || secret.length === 0) {
      return refusal(
        "attestation_unknown_key",
        `the trusted-channel attestation for ${what} names key \`${key_id.slice(0, 64)}\`, which is not configured`,
      );
    }
    if (!ISO_TIME.test(timestamp) || Number.isNaN(Date.parse(timestamp))) {
      return refusal("attestation_invalid", `the trusted-channel attestation for ${what} has an invalid timestamp`);
    }
    const skew = options.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
    const distance = Math.abs(options.now.getTime() - Date.parse(timestamp));
    if (!(Number.isFinite(skew) && skew >= 0) || !(distance <= skew * 1000)) {
      return refusal(
        "attestation_stale",
        `the trusted-channel attestation for ${what} was made at ${timestamp}, outside the ${skew}-second window around now`,
      );
    }
    if (!HEX_HMAC.test(hmac)) {
      return refusal(
        "attestation_invalid",
        `the trusted-channel attestation for ${what} is not a lowercase hex HMAC-SHA256`,
      );
    }
    const expected = Buffer.from(hmacHex(secret, trustedChannelStatement(subject, key_id, timestamp)), "hex");
    if (!timingSafeEqual(expected, Buffer.from(hmac, "hex"))) {
      return refusal(
        "attestation_invalid",
        `the trusted-channel attestation for ${what} does not verify with key \`${key_id}\``,
      );
    }
    return null;
  } catch {
    return refusal("attestation_invalid", `the trusted-channel attestation for ${what} could not be verified`);
  }
}
