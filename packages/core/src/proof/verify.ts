import { verify as edVerify, type KeyObject } from "node:crypto";
import {
  parseIsoTime,
  validateConsentRequest,
  validateConsentResponse,
  type ApprovedAction,
  type ConsentRequestV02,
  type ConsentResponseV02,
} from "../consent/index.js";
import { canonicalJson, tryCanonicalJson } from "../canonical-json/index.js";
import type { Issue } from "../issues/index.js";
import { NONCE_PATTERN, REQUEST_ID_PATTERN } from "../consent/fields.js";
import { scopeLengthProblem } from "./approval-caps.js";
import { publicKeyFromHex } from "./keys.js";
import type { NonceStore } from "./nonce-store.js";
import {
  approvedActionOf,
  signedPayloadHash,
  signingPayloadBytes,
  signingPayloadOf,
  type ConsentSigningPayloadV02,
} from "./payload.js";

/** Why a proof was refused; each is also an error code `proof_<reason>`. */
export const PROOF_FAILURE_REASONS = [
  "malformed",
  "wrong_key",
  "payload_mismatch",
  "bad_signature",
  "nonce_mismatch",
  "action_mismatch",
  "expired",
  "scope_too_long",
  "replayed",
] as const;
export type ProofFailureReason = (typeof PROOF_FAILURE_REASONS)[number];

/** What a verified proof establishes. */
export interface VerifiedConsent {
  readonly response: ConsentResponseV02;
  /** True only for `approved` and `approved_with_modifications`: the action may run. */
  readonly approved: boolean;
  /** The exact action the proof is bound to (modifications applied). */
  readonly action: ApprovedAction;
  readonly payload: ConsentSigningPayloadV02;
}

/** The outcome of a verification: the verified consent, or the first reason it was refused. */
export type ProofVerification =
  | { readonly ok: true; readonly value: VerifiedConsent }
  | { readonly ok: false; readonly reason: ProofFailureReason; readonly issues: readonly Issue[] };

/** What binds a response to the request it answers (§6.3 4, 5): the request's id, nonce and expiry. */
export interface ConsentRequestBinding {
  readonly id: string;
  readonly nonce: string;
  readonly expires_at: string;
}

/** What a proof is checked against. Give `request`, `expectedAction`, or both. */
export interface VerifyProofOptions {
  /** The request the response answers: fixes the approved action, the request id and the nonce. */
  readonly request?: unknown;
  /**
   * The request the response answers, when it cannot fix the approved action (it showed the parameters
   * redacted, so the action is `expectedAction`): the response must carry its id and nonce
   * (`nonce_mismatch`), must have been given by its `expires_at`, and a single-use approval must end by then
   * (`expired`), as with `request`. Its other fields are not read. Checked also when `request` is given.
   */
  readonly answers?: ConsentRequestBinding;
  /**
   * The action about to run. With `request`, it must equal the approved action (`action_mismatch`
   * otherwise); alone, it is taken as the approved action (modifications already applied).
   */
  readonly expectedAction?: ApprovedAction;
  /** The public key the verifier trusts: 64 lowercase hex digits or a key object. */
  readonly trustedPublicKey: string | KeyObject;
  /** The injected clock. */
  readonly now: Date | number;
}

/** The issue code of each reason (listed in docs/reference/errors.md). */
const ISSUE_CODES: Readonly<Record<ProofFailureReason, { readonly code: string }>> = {
  malformed: { code: "proof_malformed" },
  wrong_key: { code: "proof_wrong_key" },
  payload_mismatch: { code: "proof_payload_mismatch" },
  bad_signature: { code: "proof_bad_signature" },
  nonce_mismatch: { code: "proof_nonce_mismatch" },
  action_mismatch: { code: "proof_action_mismatch" },
  expired: { code: "proof_expired" },
  scope_too_long: { code: "proof_scope_too_long" },
  replayed: { code: "proof_replayed" },
};

function refuse(reason: ProofFailureReason, message: string, path: Issue["path"] = []): ProofVerification {
  return { ok: false, reason, issues: [{ code: ISSUE_CODES[reason].code, path, message }] };
}

/** Key objects of recently trusted hex keys: building one costs about as much as a verification. */
const KEY_CACHE = new Map<string, KeyObject>();
const KEY_CACHE_SIZE = 64;

function keyObjectOf(hex: string): KeyObject {
  const cached = KEY_CACHE.get(hex);
  if (cached !== undefined) return cached;
  const object = publicKeyFromHex(hex);
  if (KEY_CACHE.size >= KEY_CACHE_SIZE) KEY_CACHE.clear();
  KEY_CACHE.set(hex, object);
  return object;
}

function trustedKey(key: string | KeyObject): { hex: string; object: KeyObject } | undefined {
  try {
    if (typeof key === "string") return { hex: key, object: keyObjectOf(key) };
    const jwk = key.export({ format: "jwk" });
    if (jwk.crv !== "Ed25519" || jwk.x === undefined) return undefined;
    return { hex: Buffer.from(jwk.x, "base64url").toString("hex"), object: key };
  } catch {
    return undefined;
  }
}

function resolveAction(
  response: ConsentResponseV02,
  request: ConsentRequestV02 | undefined,
  expected: ApprovedAction | undefined,
): ApprovedAction | ProofVerification {
  if (request !== undefined) return approvedActionOf(request, response.modifications);
  if (expected === undefined)
    return refuse("malformed", "nothing to check the proof against: give the request or the expected action");
  const action = { server: expected.server, tool: expected.tool, parameters: expected.parameters };
  const r = tryCanonicalJson(action);
  return r.ok ? action : refuse("malformed", `expected action: ${r.issues[0]?.message ?? "not plain JSON"}`);
}

/**
 * Checks a consent proof without spending its nonce (§6.3 plus binding): strict shape, trusted key,
 * payload hash, Ed25519 signature, request id and nonce against the request, the exact action, and
 * expiry with the injected clock. Use {@link verifyConsentProof} to accept one: it also spends the nonce.
 */
export function checkConsentProof(response: unknown, options: VerifyProofOptions): ProofVerification {
  const shape = validateConsentResponse(response);
  if (!shape.ok) return { ok: false, reason: "malformed", issues: shape.issues };
  const res = shape.value;
  let request: ConsentRequestV02 | undefined;
  if (options.request !== undefined) {
    const r = validateConsentRequest(options.request);
    if (!r.ok) return refuse("malformed", `consent request: ${r.issues[0]?.message ?? "invalid"}`);
    request = r.value;
  }
  const bindings: ConsentRequestBinding[] = request === undefined ? [] : [request];
  if (options.answers !== undefined) {
    const answers = bindingOf(options.answers);
    if (answers === undefined)
      return refuse(
        "malformed",
        "`answers`: expected a request's `cr_` id, `n_<uuid>` nonce and RFC 3339 `expires_at`",
      );
    bindings.push(answers);
  }
  const key = trustedKey(options.trustedPublicKey);
  if (key === undefined)
    return refuse("malformed", "trusted public key is not an ed25519 key (64 lowercase hex digits)");
  const now = clockMs(options.now);
  if (now === undefined)
    return refuse("malformed", "the verifier's clock (`now`) is not a time: nothing can be checked");
  if (res.proof.public_key !== key.hex) {
    return refuse("wrong_key", "the proof was signed by a key other than the trusted one", ["proof", "public_key"]);
  }
  const action = resolveAction(res, request, options.expectedAction);
  if ("ok" in action) return action;
  const payload = signingPayloadOf(res, action);
  const bytes = signingPayloadBytes(payload);
  if (signedPayloadHash(bytes) !== res.proof.signed_payload_hash) {
    return refuse(
      "payload_mismatch",
      "the payload rebuilt from the response and the approved action does not hash to `signed_payload_hash`",
      ["proof", "signed_payload_hash"],
    );
  }
  if (!edVerify(null, bytes, key.object, Buffer.from(res.proof.signature, "hex"))) {
    return refuse("bad_signature", "the ed25519 signature does not verify", ["proof", "signature"]);
  }
  const expected = request === undefined ? undefined : options.expectedAction; // alone, it is the action
  return checkBinding(res, bindings, { expected, now }, verified(res, action, payload));
}

function verified(res: ConsentResponseV02, action: ApprovedAction, payload: ConsentSigningPayloadV02): VerifiedConsent {
  return { response: res, approved: isApproval(res), action, payload };
}

/**
 * The injected clock in ms, or undefined when it is no finite time: an invalid `Date` or `NaN` compares false
 * with every expiry, so it would pass any approval as unexpired (fail closed: refused as malformed).
 */
function clockMs(now: unknown): number | undefined {
  const isDate = Object.prototype.toString.call(now) === "[object Date]"; // also a Date of another realm
  const ms = typeof now === "number" ? now : isDate ? Date.prototype.getTime.call(now) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** What {@link checkConsentSignature} found: the signature holds, or the first reason it does not. */
export type ConsentSignatureCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: ProofFailureReason; readonly issues: readonly Issue[] };

/**
 * Checks only that `response` was signed with the trusted key over an action whose `action_hash` (§6.2) is
 * `actionHashRef`, for when the action itself is not at hand (an audit event whose action was cut to fit a
 * line keeps its hash): strict shape, the key, the rebuilt payload's hash and the Ed25519 signature. It
 * says nothing of which action has that hash, nor of expiry or the nonce: never use it to accept a proof.
 */
export function checkConsentSignature(
  response: unknown,
  actionHashRef: string,
  trustedPublicKey: string | KeyObject,
): ConsentSignatureCheck {
  const shape = validateConsentResponse(response);
  if (!shape.ok) return { ok: false, reason: "malformed", issues: shape.issues };
  const res = shape.value;
  if (!/^sha256:[0-9a-f]{64}$/.test(actionHashRef))
    return refuse("malformed", "the action hash is not `sha256:` and 64 lowercase hex digits");
  const key = trustedKey(trustedPublicKey);
  if (key === undefined)
    return refuse("malformed", "trusted public key is not an ed25519 key (64 lowercase hex digits)");
  if (res.proof.public_key !== key.hex) {
    const why = "the proof was signed by a key other than the trusted one";
    return refuse("wrong_key", why, ["proof", "public_key"]);
  }
  // the payload as signed, with the action's hash as given (JCS orders the keys)
  const payload = { ...signingPayloadOf(res, { server: "", tool: "", parameters: {} }), action_hash: actionHashRef };
  const bytes = signingPayloadBytes(payload);
  if (signedPayloadHash(bytes) !== res.proof.signed_payload_hash) {
    const why = "the payload rebuilt from the response and the action hash does not hash to `signed_payload_hash`";
    return refuse("payload_mismatch", why, ["proof", "signed_payload_hash"]);
  }
  if (!edVerify(null, bytes, key.object, Buffer.from(res.proof.signature, "hex"))) {
    return refuse("bad_signature", "the ed25519 signature does not verify", ["proof", "signature"]);
  }
  return { ok: true };
}

function isApproval(res: ConsentResponseV02): boolean {
  return res.decision === "approved" || res.decision === "approved_with_modifications";
}

/** The id, nonce and expiry of a request-like value, or undefined when one of them is malformed. */
function bindingOf(value: unknown): ConsentRequestBinding | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const { id, nonce, expires_at: expiresAt } = value as Record<string, unknown>;
  if (typeof id !== "string" || !REQUEST_ID_PATTERN.test(id)) return undefined;
  if (typeof nonce !== "string" || !NONCE_PATTERN.test(nonce)) return undefined;
  if (typeof expiresAt !== "string" || parseIsoTime(expiresAt) === undefined) return undefined;
  return { id, nonce, expires_at: expiresAt };
}

function checkBinding(
  res: ConsentResponseV02,
  bindings: readonly ConsentRequestBinding[],
  options: { readonly expected: ApprovedAction | undefined; readonly now: number },
  verified: VerifiedConsent,
): ProofVerification {
  for (const bound of bindings) {
    if (res.request_id !== bound.id)
      return refuse("nonce_mismatch", "the response answers another request", ["request_id"]);
    if (res.nonce !== bound.nonce) return refuse("nonce_mismatch", "the nonce differs from the request's", ["nonce"]);
  }
  if (options.expected !== undefined && !sameAction(options.expected, verified.action)) {
    return refuse("action_mismatch", "the server, tool or parameters differ from the approved action", ["action"]);
  }
  // a session or window signed to outlast its cap (12 h, 7 days) approves nothing, however well signed
  const tooLong = scopeLengthProblem(res);
  if (tooLong !== null) return refuse("scope_too_long", tooLong, ["conditions", "valid_until"]);
  const validUntil = parseIsoTime(res.conditions.valid_until) ?? Number.NEGATIVE_INFINITY;
  if (options.now >= validUntil)
    return refuse("expired", `the approval expired at ${res.conditions.valid_until}`, ["conditions", "valid_until"]);
  const reusable = res.conditions.scope === "session" || res.conditions.scope === "window";
  for (const bound of bindings) {
    const requestEnd = parseIsoTime(bound.expires_at) ?? Number.NEGATIVE_INFINITY;
    if ((parseIsoTime(res.timestamp) ?? Number.POSITIVE_INFINITY) > requestEnd) {
      return refuse("expired", `the answer came after the request expired at ${bound.expires_at}`, ["timestamp"]);
    }
    // every ACP signer caps a single-use approval at its request's end; one signed longer is refused (§9.5)
    if (!reusable && validUntil > requestEnd) {
      const why = `a single-use approval ends with its request: \`valid_until\` ${res.conditions.valid_until} is after the request's \`expires_at\` ${bound.expires_at}`;
      return refuse("expired", why, ["conditions", "valid_until"]);
    }
  }
  return { ok: true, value: verified };
}

function sameAction(a: ApprovedAction, b: ApprovedAction): boolean {
  const ca = tryCanonicalJson({ server: a.server, tool: a.tool, parameters: a.parameters });
  return ca.ok && ca.value === canonicalJson({ server: b.server, tool: b.tool, parameters: b.parameters });
}

/**
 * Verifies a consent proof and, when it holds, spends its nonce: the proof is accepted once only, and a
 * second presentation is refused as `replayed` (also after a restart with a durable {@link NonceStore}).
 * Nothing is spent for a proof that fails any other check.
 */
export async function verifyConsentProof(
  response: unknown,
  options: VerifyProofOptions & { readonly nonceStore: NonceStore },
): Promise<ProofVerification> {
  const checked = checkConsentProof(response, options);
  if (!checked.ok) return checked;
  const res = checked.value.response;
  const expiresAt = parseIsoTime(res.conditions.valid_until) ?? 0;
  let spent: unknown;
  try {
    spent = await options.nonceStore.spend(res.nonce, res.request_id, expiresAt);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return refuse("replayed", `could not record the nonce as spent, so the proof is not accepted: ${why}`, ["nonce"]);
  }
  if (spent === true) return checked; // anything else (a driver's result, undefined) spent nothing we know of
  // a store that forgot nonces refuses one whose approval ended no later than those: say it is too old
  const forgotten = await Promise.resolve(options.nonceStore.forgottenThrough?.()).catch(() => undefined);
  if (forgotten !== undefined && expiresAt <= forgotten) {
    return refuse(
      "expired",
      `the approval ended at ${res.conditions.valid_until}, no later than approvals whose spent nonces were already forgotten (until ${Math.abs(forgotten) <= 8.64e15 ? new Date(forgotten).toISOString() : String(forgotten)}): it can no longer be told from a replay (was the clock set back?)`,
      ["conditions", "valid_until"],
    );
  }
  return refuse("replayed", "this approval was already used (its nonce is spent)", ["nonce"]);
}
