/**
 * A person's intent update for a live session, as `acp intent set` writes it into the home's `state.db`:
 * a canonical JSON payload signed with the home's Ed25519 key. The proxy verifies it with the public key it
 * read at start, so a process that can write `state.db` but does not hold the key cannot forge an update.
 * The signed update IS the person's confirmation of the intent update (see docs/guides/intents.md).
 */
import { sign, verify, type KeyObject } from "node:crypto";
import { canonicalJson, compileIntent, publicKeyFromHex, type CompiledIntent } from "@acp/core";
import type { IntentUpdateRow, LiveSessionRow } from "@acp/store";

/** The payload's `kind`: keeps these signatures apart from every other thing the home key signs. */
export const INTENT_UPDATE_KIND = "acp.intent_update.v1";

/** Largest payload the proxy reads from `state.db`. */
export const MAX_INTENT_UPDATE_BYTES = 256 * 1024;

/** What is signed: the session, the update's sequence number, the versions and the new intent. */
export interface IntentUpdatePayload {
  readonly kind: typeof INTENT_UPDATE_KIND;
  readonly session_id: string;
  readonly seq: number;
  readonly from_version: number;
  readonly from_hash: string;
  /** The new intent, `version` stamped to `from_version + 1`. */
  readonly intent: Record<string, unknown>;
  readonly intent_hash: string;
  /** Who set it (`cli:USER`). */
  readonly by: string;
  readonly issued_at: string;
}

/** A verified update: the payload and its compiled intent. */
export interface VerifiedIntentUpdate {
  readonly payload: IntentUpdatePayload;
  readonly compiled: CompiledIntent;
}

/** Why an update was refused. */
export type IntentUpdateFailure =
  "intent_update_malformed" | "intent_update_signature_invalid" | "intent_update_mismatch" | "intent_update_invalid";

/** The outcome of {@link verifyIntentUpdate}. */
export type IntentUpdateCheck =
  | { readonly ok: true; readonly update: VerifiedIntentUpdate }
  | { readonly ok: false; readonly code: IntentUpdateFailure; readonly message: string };

/** Builds and signs the payload for update `seq` of `session` (inside the queueing transaction). */
export function signIntentUpdate(
  privateKey: KeyObject,
  session: LiveSessionRow,
  seq: number,
  intent: Record<string, unknown>,
  meta: { readonly by: string; readonly issuedAt: string },
): { payloadJson: string; signature: string; payload: IntentUpdatePayload } {
  const stamped = { ...intent, version: session.intentVersion + 1 };
  const compiled = compileIntent(stamped);
  if (!compiled.ok) throw new Error("the intent does not validate");
  const payload: IntentUpdatePayload = {
    kind: INTENT_UPDATE_KIND,
    session_id: session.id,
    seq,
    from_version: session.intentVersion,
    from_hash: session.intentHash,
    intent: stamped,
    intent_hash: compiled.value.hash,
    by: meta.by,
    issued_at: meta.issuedAt,
  };
  const payloadJson = canonicalJson(payload);
  const signature = sign(null, Buffer.from(payloadJson, "utf8"), privateKey).toString("hex");
  return { payloadJson, signature, payload };
}

function readPayload(json: string): IntentUpdatePayload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const p = value as Record<string, unknown>;
  const intent = p["intent"];
  const strings = ["session_id", "from_hash", "intent_hash", "by", "issued_at"] as const;
  if (p["kind"] !== INTENT_UPDATE_KIND || strings.some((k) => typeof p[k] !== "string")) return undefined;
  if (!Number.isSafeInteger(p["seq"]) || !Number.isSafeInteger(p["from_version"])) return undefined;
  if (typeof intent !== "object" || intent === null || Array.isArray(intent)) return undefined;
  return value as IntentUpdatePayload;
}

const refuse = (code: IntentUpdateFailure, message: string): IntentUpdateCheck => ({ ok: false, code, message });

/**
 * Verifies a queued update against the home's public key: the signature over the exact payload bytes, the
 * payload names this row's session and sequence number, and its intent compiles to the hash it claims.
 */
export function verifyIntentUpdate(row: IntentUpdateRow, publicKeyHex: string): IntentUpdateCheck {
  if (row.payloadJson.length > MAX_INTENT_UPDATE_BYTES)
    return refuse("intent_update_malformed", `the update is larger than ${MAX_INTENT_UPDATE_BYTES} bytes`);
  if (!/^[0-9a-f]{128}$/.test(row.signature))
    return refuse("intent_update_signature_invalid", "the update's signature is not 64 bytes of hex");
  let good = false;
  try {
    good = verify(
      null,
      Buffer.from(row.payloadJson, "utf8"),
      publicKeyFromHex(publicKeyHex),
      Buffer.from(row.signature, "hex"),
    );
  } catch {
    good = false;
  }
  if (!good) return refuse("intent_update_signature_invalid", "the update is not signed by this home's key");
  const payload = readPayload(row.payloadJson);
  if (payload === undefined) return refuse("intent_update_malformed", "the signed update is not an intent update");
  if (payload.session_id !== row.sessionId || payload.seq !== row.seq)
    return refuse(
      "intent_update_mismatch",
      `the signed update is for session \`${payload.session_id}\` update ${payload.seq}, not this one`,
    );
  const compiled = compileIntent(payload.intent);
  if (!compiled.ok) return refuse("intent_update_invalid", "the signed intent does not validate");
  if (compiled.value.hash !== payload.intent_hash)
    return refuse("intent_update_invalid", "the signed intent does not match its hash");
  return { ok: true, update: { payload, compiled: compiled.value } };
}
