import { fail, ok, type Result } from "../issues/index.js";
import { RISK_LEVELS } from "../request/index.js";
import {
  FieldChecker,
  NONCE_PATTERN,
  PUBLIC_KEY_PATTERN,
  REQUEST_ID_PATTERN,
  SHA256_REF_PATTERN,
  SIGNATURE_PATTERN,
} from "./fields.js";
import {
  CONSENT_CHANNELS,
  CONSENT_DECISIONS,
  CONSENT_PROTOCOL_VERSION,
  CONSENT_SCOPES,
  type ConsentRequestV02,
  type ConsentResponseV02,
} from "./types.js";

const REQUEST_KEYS = ["type", "version", "id", "timestamp", "expires_at", "agent", "action", "policy", "nonce"];
const RESPONSE_KEYS = [
  "type",
  "version",
  "request_id",
  "timestamp",
  "decision",
  "approver",
  "modifications",
  "conditions",
  "nonce",
  "proof",
];

function checkHeader(c: FieldChecker, r: Record<string, unknown>, type: string): void {
  if (r["type"] !== type) c.add(["type"], `expected \`${type}\``);
  if (r["version"] !== CONSENT_PROTOCOL_VERSION) c.add(["version"], `expected \`${CONSENT_PROTOCOL_VERSION}\``);
}

/**
 * Checks a value is a consent request exactly as §4.1: every field present, no unknown field, ids
 * `cr_…`, nonce `n_<lowercase uuid>`, ISO-8601 times with a zone, JSON parameters. Issues carry
 * the code `consent_request_malformed`.
 */
export function validateConsentRequest(value: unknown): Result<ConsentRequestV02> {
  const c = new FieldChecker({ code: "consent_request_malformed" });
  const r = c.object(value, [], REQUEST_KEYS);
  if (r === undefined) return fail(c.issues);
  checkHeader(c, r, "consent_request");
  c.pattern(r["id"], ["id"], REQUEST_ID_PATTERN, "`cr_` followed by letters, digits, `_` or `-`");
  c.time(r["timestamp"], ["timestamp"]);
  c.time(r["expires_at"], ["expires_at"]);
  c.pattern(r["nonce"], ["nonce"], NONCE_PATTERN, "`n_` followed by a lowercase uuid");
  const agent = c.object(r["agent"], ["agent"], ["id", "name", "command"]);
  if (agent !== undefined) for (const k of ["id", "name", "command"]) c.string(agent[k], ["agent", k]);
  const actionKeys = ["tool", "server", "category", "risk_level", "parameters", "description"];
  const action = c.object(r["action"], ["action"], actionKeys);
  if (action !== undefined) {
    for (const k of ["tool", "server", "category"]) c.string(action[k], ["action", k], 256);
    c.oneOf(action["risk_level"], ["action", "risk_level"], RISK_LEVELS);
    c.jsonObject(action["parameters"], ["action", "parameters"]);
    const description = action["description"];
    if (typeof description !== "string") c.add(["action", "description"], "expected a string");
    else c.wellFormed(description, ["action", "description"]);
  }
  const policy = c.object(r["policy"], ["policy"], ["rule_id", "rule_name", "required_level"]);
  if (policy !== undefined)
    for (const k of ["rule_id", "rule_name", "required_level"]) c.string(policy[k], ["policy", k]);
  return c.issues.length > 0 ? fail(c.issues) : ok(value as ConsentRequestV02);
}

/** `conditions`: §4.2's single-use approval, or ACP's signed session / window scope. */
function checkConditions(c: FieldChecker, cond: Record<string, unknown>): void {
  c.time(cond["valid_until"], ["conditions", "valid_until"]);
  const scope = cond["scope"];
  if (scope !== undefined) c.oneOf(scope, ["conditions", "scope"], CONSENT_SCOPES);
  const reusable = scope === "session" || scope === "window";
  if (cond["single_use"] !== !reusable) {
    c.add(["conditions", "single_use"], reusable ? "must be false for a session or window scope" : "must be true");
  }
  if (scope === "session") c.string(cond["session_id"], ["conditions", "session_id"], 256);
  else if (cond["session_id"] !== undefined)
    c.add(["conditions", "session_id"], "only a session scope names a session");
}

/**
 * Checks a value is a consent response exactly as §4.2, strictly: no unknown field at any level,
 * `single_use: true`, algorithm `Ed25519`, a 64-hex-digit public key, a 128-hex-digit signature and a
 * `sha256:` hash, all lowercase. Issues carry the code `proof_malformed`.
 */
export function validateConsentResponse(value: unknown): Result<ConsentResponseV02> {
  const c = new FieldChecker({ code: "proof_malformed" });
  const r = c.object(value, [], RESPONSE_KEYS);
  if (r === undefined) return fail(c.issues);
  checkHeader(c, r, "consent_response");
  c.pattern(r["request_id"], ["request_id"], REQUEST_ID_PATTERN, "`cr_` followed by letters, digits, `_` or `-`");
  c.time(r["timestamp"], ["timestamp"]);
  c.oneOf(r["decision"], ["decision"], CONSENT_DECISIONS);
  const approver = c.object(r["approver"], ["approver"], ["id", "channel"]);
  if (approver !== undefined) {
    c.string(approver["id"], ["approver", "id"]);
    c.oneOf(approver["channel"], ["approver", "channel"], CONSENT_CHANNELS);
  }
  const mods = r["modifications"];
  if (mods !== null) c.jsonObject(mods, ["modifications"]);
  if (r["decision"] === "approved_with_modifications" && mods === null) {
    c.add(["modifications"], "must be an object when the decision is `approved_with_modifications`");
  }
  if (r["decision"] !== "approved_with_modifications" && mods !== null && Object.hasOwn(r, "modifications")) {
    c.add(["modifications"], "must be null unless the decision is `approved_with_modifications`");
  }
  const cond = c.object(r["conditions"], ["conditions"], ["valid_until", "single_use"], ["scope", "session_id"]);
  if (cond !== undefined) checkConditions(c, cond);
  c.pattern(r["nonce"], ["nonce"], NONCE_PATTERN, "`n_` followed by a lowercase uuid");
  const proofKeys = ["algorithm", "public_key", "signature", "signed_payload_hash"];
  const proof = c.object(r["proof"], ["proof"], proofKeys);
  if (proof !== undefined) {
    if (proof["algorithm"] !== "Ed25519") c.add(["proof", "algorithm"], "expected `Ed25519`");
    c.pattern(proof["public_key"], ["proof", "public_key"], PUBLIC_KEY_PATTERN, "64 lowercase hex digits");
    c.pattern(proof["signature"], ["proof", "signature"], SIGNATURE_PATTERN, "128 lowercase hex digits");
    const hashPath = ["proof", "signed_payload_hash"];
    c.pattern(proof["signed_payload_hash"], hashPath, SHA256_REF_PATTERN, "`sha256:` and 64 lowercase hex digits");
  }
  return c.issues.length > 0 ? fail(c.issues) : ok(value as ConsentResponseV02);
}
