import { createHmac, timingSafeEqual } from "node:crypto";

/** The header carrying `sha256=<hex HMAC-SHA256 of "<label>.<timestamp>.<body>">`. */
export const SIGNATURE_HEADER = "x-acp-signature";
/** The header carrying the signing time in Unix seconds. */
export const TIMESTAMP_HEADER = "x-acp-timestamp";

/**
 * Which way a signed message goes: `delivery`, every POST the proxy sends the receiver (consent requests,
 * `consent_settled` notices); `callback`, the receiver's decision POSTed back to the proxy. Both are signed
 * with the one shared secret, so the direction is part of what is signed: a signature made for one
 * direction does not verify in the other.
 */
export type WebhookDirection = "delivery" | "callback";

/** The label signed in front of the timestamp, per direction. */
export const WEBHOOK_SIGNATURE_LABELS: Readonly<Record<WebhookDirection, string>> = {
  delivery: "acp-delivery",
  callback: "acp-callback",
};

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;
const TIMESTAMP = /^[0-9]{1,12}$/;

/**
 * `sha256=` + hex HMAC-SHA256 of `"<label>.<timestamp>.<body>"` under the shared secret: the direction's label
 * (`acp-delivery` or `acp-callback`), a `.`, the timestamp's ASCII digits, a `.`, then the body's bytes exactly
 * as sent (a string body is its UTF-8 encoding).
 */
export function signWebhookBody(
  secret: string,
  direction: WebhookDirection,
  timestamp: string,
  body: string | Uint8Array,
): string {
  const label = WEBHOOK_SIGNATURE_LABELS[direction];
  return `sha256=${createHmac("sha256", secret).update(`${label}.${timestamp}.`).update(body).digest("hex")}`;
}

/** The two headers to send with a body the proxy delivers to the receiver at `now`. */
export function webhookHeaders(secret: string, body: string, now: Date): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  return { "X-ACP-Timestamp": timestamp, "X-ACP-Signature": signWebhookBody(secret, "delivery", timestamp, body) };
}

/** Why a signed message was refused. */
export type WebhookAuthFailure = "missing_signature" | "stale_timestamp" | "bad_signature";

/**
 * Checks a body signed for `direction` (the raw bytes as received): well-formed headers, a timestamp within
 * `toleranceMs` of `now`, and a signature that matches (compared in constant time). A signature made for the
 * other direction is a `bad_signature`.
 */
export function checkWebhookSignature(
  secret: string,
  direction: WebhookDirection,
  headers: { readonly timestamp: unknown; readonly signature: unknown },
  body: string | Uint8Array,
  now: Date,
  toleranceMs: number,
): WebhookAuthFailure | null {
  const { timestamp, signature } = headers;
  if (typeof timestamp !== "string" || typeof signature !== "string") return "missing_signature";
  if (!TIMESTAMP.test(timestamp) || !SIGNATURE.test(signature)) return "missing_signature";
  if (Math.abs(now.getTime() - Number(timestamp) * 1000) > toleranceMs) return "stale_timestamp";
  const expected = Buffer.from(signWebhookBody(secret, direction, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : "bad_signature";
}
