import { actionHash } from "../proof/payload.js";
import { checkConsentProof, checkConsentSignature } from "../proof/verify.js";
import type { ApprovedAction } from "../consent/index.js";
import { toEd25519PublicKey, type CheckpointPublicKey } from "./checkpoint.js";
import type { AuditEventV02 } from "./event.js";

/** The events that carry a person's signed answer as `metadata.consent_response`. */
const CONSENT_EVENTS: ReadonlySet<string> = new Set(["consent_approved", "consent_denied"]);

/** The start of a string the writer put in place of one too long for a line (`omittedString`). */
const OMITTED = "[omitted from the audit: ";

/**
 * What checking an event's consent response with the public key alone found: `none` (no response in
 * the event), `valid`, `invalid` (with why), or `unchecked`: the action it is signed over is not in the
 * event (`withheld`: redaction would have changed it; `missing`: written before events recorded it;
 * `omitted`: a value was cut to fit the line; `signatureChecked` when the response's signature was still
 * checked, against the action hash recorded beside the cut action).
 */
export type EventConsentCheck =
  | { readonly status: "none" }
  | { readonly status: "valid" }
  | { readonly status: "invalid"; readonly message: string }
  | {
      readonly status: "unchecked";
      readonly why: "withheld" | "missing" | "omitted";
      readonly signatureChecked?: true;
    };

/**
 * Checks the signed `metadata.consent_response` of a `consent_approved` or `consent_denied` event against
 * `metadata.consent_action` (the `{server, tool, parameters}` its `action_hash` was computed over) with
 * the public key alone, with the proof verifier ({@link checkConsentProof}): strict shape, the key,
 * the rebuilt payload's hash and the Ed25519 signature. Expiry is judged at the response's own
 * timestamp (an old event's approval has long expired); the nonce is not spent. Never throws.
 */
export function checkEventConsent(event: AuditEventV02, publicKey: CheckpointPublicKey): EventConsentCheck {
  if (!CONSENT_EVENTS.has(event.event_type)) return { status: "none" };
  const metadata = event.metadata;
  const response = metadata["consent_response"];
  if (response === undefined || response === null) {
    // metadata cut whole to fit the line (`audit_omitted`): whatever response it held cannot be checked
    return "audit_omitted" in metadata ? { status: "unchecked", why: "omitted" } : { status: "none" };
  }
  if (!("consent_action" in metadata)) return { status: "unchecked", why: "missing" };
  const action = metadata["consent_action"];
  if (action === null) return { status: "unchecked", why: "withheld" };
  const hash = metadata["consent_action_hash"];
  const checked = checkAgainst(action, response, publicKey);
  if (checked.status === "valid") {
    // the hash recorded beside a whole action must be its own (it is what a cut action is checked by)
    if (hash === undefined || (typeof hash === "string" && hash === hashOf(action))) return checked;
    return {
      status: "invalid",
      message: "`metadata.consent_action_hash` is not the hash of `metadata.consent_action`",
    };
  }
  // a value cut to fit the line (in the action, or in the response's modifications): the signed payload
  // cannot be rebuilt, so only its hash fails. Checked first, so an argument that only quotes the cut's text
  // is still checked, and a wrong key is still a failure
  if (!checked.payloadMismatch || !JSON.stringify(action).concat(JSON.stringify(response)).includes(OMITTED)) {
    return { status: "invalid", message: checked.message };
  }
  // only the action cut, and its hash recorded beside it: the signature is checked against that hash (a
  // response edited in the log fails), though the cut action cannot be matched to it
  if (typeof hash !== "string" || JSON.stringify(response).includes(OMITTED))
    return { status: "unchecked", why: "omitted" };
  const signature = checkConsentSignature(response, hash, toEd25519PublicKey(publicKey));
  if (signature.ok) return { status: "unchecked", why: "omitted", signatureChecked: true };
  const issue = signature.issues[0];
  return {
    status: "invalid",
    message: `${signature.reason}: ${issue?.message ?? "the consent response does not verify"} (against \`metadata.consent_action_hash\`)`,
  };
}

/** `action_hash` of a recorded action, or undefined when it is not plain JSON. */
function hashOf(action: unknown): string | undefined {
  try {
    return actionHash(action as ApprovedAction);
  } catch {
    return undefined;
  }
}

/** The response checked against `action` with the public key; `payloadMismatch` when only the payload's hash failed. */
function checkAgainst(
  action: unknown,
  response: unknown,
  publicKey: CheckpointPublicKey,
):
  | { readonly status: "valid" }
  | { readonly status: "invalid"; readonly message: string; readonly payloadMismatch?: true } {
  if (typeof action !== "object" || Array.isArray(action)) {
    return { status: "invalid", message: "`metadata.consent_action` is not a {server, tool, parameters} object" };
  }
  const { server, tool, parameters } = action as Record<string, unknown>;
  if (typeof server !== "string" || typeof tool !== "string" || typeof parameters !== "object" || parameters === null) {
    return { status: "invalid", message: "`metadata.consent_action` is not a {server, tool, parameters} object" };
  }
  let key;
  try {
    key = toEd25519PublicKey(publicKey);
  } catch {
    return { status: "invalid", message: "the public key is not an ed25519 key" };
  }
  const timestamp = (response as { timestamp?: unknown }).timestamp;
  const signedAt = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  const verdict = checkConsentProof(response, {
    expectedAction: { server, tool, parameters } as ApprovedAction,
    trustedPublicKey: key,
    now: Number.isNaN(signedAt) ? 0 : signedAt,
  });
  if (verdict.ok) return { status: "valid" };
  // an approval already expired when it was signed is still a signature that verifies
  if (verdict.reason === "expired") return { status: "valid" };
  const issue = verdict.issues[0];
  return {
    status: "invalid",
    message: `${verdict.reason}: ${issue?.message ?? "the consent response does not verify"}`,
    ...(verdict.reason === "payload_mismatch" ? { payloadMismatch: true as const } : {}),
  };
}
