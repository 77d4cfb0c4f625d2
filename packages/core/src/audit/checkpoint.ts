import { createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { canonicalJsonBytes, isSha256Ref } from "../canonical-json/index.js";
import { fail, ok, type Issue, type Result } from "../issues/index.js";
import type { AuditEventInput, AuditEventV02 } from "./event.js";
import { ISO_8601 } from "./parse-event.js";

/** The `type` of a checkpoint body. */
export const CHECKPOINT_KIND = "audit_checkpoint";

/**
 * What a checkpoint signs: the chain's head hash and length at a moment. `count` is the number of
 * lines before the checkpoint line (earlier checkpoints included); `head_hash` is the `event_hash` of
 * the line just before it (`null` for an empty log).
 */
export interface AuditCheckpointBody {
  readonly type: typeof CHECKPOINT_KIND;
  readonly head_hash: string | null;
  readonly count: number;
  readonly timestamp: string;
}

/**
 * Signs checkpoint bodies: an Ed25519 private `KeyObject`, or a function that returns the 64-byte
 * Ed25519 signature of the bytes it is given (for keys held elsewhere).
 */
export type CheckpointSigner = KeyObject | ((message: Uint8Array) => Uint8Array);

/** An Ed25519 public key: a `KeyObject`, the raw 32 bytes, or those bytes as 64 hex digits. */
export type CheckpointPublicKey = KeyObject | Uint8Array | string;

/** A checkpoint line's signed content, read back from its metadata. */
export interface AuditCheckpoint {
  readonly body: AuditCheckpointBody;
  /** Lowercase hex of the 64-byte Ed25519 signature over the JCS bytes of `body`. */
  readonly signature: string;
}

/** Builds a checkpoint body. */
export function createCheckpointBody(headHash: string | null, count: number, timestamp: string): AuditCheckpointBody {
  return { type: CHECKPOINT_KIND, head_hash: headHash, count, timestamp };
}

/** Signs a body: Ed25519 over the UTF-8 bytes of its RFC 8785 canonical JSON; returns lowercase hex. */
export function signCheckpoint(body: AuditCheckpointBody, signer: CheckpointSigner): string {
  const message = canonicalJsonBytes(body);
  const signature = typeof signer === "function" ? signer(message) : sign(null, message, signer);
  return Buffer.from(signature).toString("hex");
}

/**
 * Turns a public key in any accepted form into a `KeyObject`. Hex must be exactly 64 hex digits
 * (surrounding whitespace is ignored); anything else throws with a clear message.
 */
export function toEd25519PublicKey(key: CheckpointPublicKey): KeyObject {
  if (typeof key !== "string" && !(key instanceof Uint8Array)) return key;
  let raw: Buffer;
  if (typeof key === "string") {
    const hex = key.trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error("public key is not 64 hex digits (a raw Ed25519 key)");
    raw = Buffer.from(hex, "hex");
  } else {
    if (key.length !== 32) throw new Error(`public key is ${key.length} bytes (expected 32)`);
    raw = Buffer.from(key);
  }
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
}

/** Whether `signature` (hex) is a valid Ed25519 signature of the body under the key. Never throws. */
export function verifyCheckpointSignature(
  body: AuditCheckpointBody,
  signature: string,
  publicKey: CheckpointPublicKey,
): boolean {
  if (!/^[0-9a-f]{128}$/.test(signature)) return false;
  try {
    return verify(null, canonicalJsonBytes(body), toEd25519PublicKey(publicKey), Buffer.from(signature, "hex"));
  } catch {
    return false;
  }
}

/** The input the writer appends for a signed checkpoint (event type `checkpoint`). */
export function createCheckpointInput(checkpoint: AuditCheckpoint): AuditEventInput {
  return {
    event_type: "checkpoint",
    metadata: { checkpoint: { ...checkpoint.body }, signature: checkpoint.signature },
  };
}

function invalid(message: string): Result<AuditCheckpoint> {
  const issue: Issue = { code: "schema_invalid", path: ["metadata", "checkpoint"], message };
  return fail([issue]);
}

/** Reads the signed checkpoint out of a `checkpoint` event's metadata, checking its shape. */
export function readCheckpoint(event: AuditEventV02): Result<AuditCheckpoint> {
  const { checkpoint, signature } = event.metadata;
  if (typeof checkpoint !== "object" || checkpoint === null || Array.isArray(checkpoint)) {
    return invalid("checkpoint has no `metadata.checkpoint` object");
  }
  const body = checkpoint as Record<string, unknown>;
  const keys = Object.keys(body).sort().join(",");
  if (keys !== "count,head_hash,timestamp,type") return invalid("`metadata.checkpoint` has unexpected fields");
  if (body["type"] !== CHECKPOINT_KIND) return invalid(`\`metadata.checkpoint.type\` is not \`${CHECKPOINT_KIND}\``);
  const count = body["count"];
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
    return invalid("`metadata.checkpoint.count` is not a non-negative integer");
  }
  const head = body["head_hash"];
  if (head !== null && !isSha256Ref(head)) return invalid("`metadata.checkpoint.head_hash` is not a sha256 hash");
  if (typeof body["timestamp"] !== "string") return invalid("`metadata.checkpoint.timestamp` is not a string");
  // as an event's own: the verifier prints it (the last checkpoint's time), a signature does not make it one
  if (!ISO_8601.test(body["timestamp"])) {
    return invalid("`metadata.checkpoint.timestamp` is not an ISO-8601 date-time");
  }
  if (typeof signature !== "string") return invalid("checkpoint has no `metadata.signature` string");
  return ok({ body: createCheckpointBody(head, count, body["timestamp"]), signature });
}
