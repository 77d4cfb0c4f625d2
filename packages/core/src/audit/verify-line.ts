import type { Issue } from "../issues/index.js";
import { readCheckpoint, verifyCheckpointSignature } from "./checkpoint.js";
import { sealAuditLine, type AuditEventV02 } from "./event.js";
import { parseAuditLine } from "./parse-event.js";
import type { AuditProblemCode } from "./problem-codes.js";
import type { AuditChainPosition, AuditProblem, VerifyAuditOptions } from "./verify-types.js";

/** The checkpoint kept beside the log, read: the line it stands for. */
export interface Anchor {
  readonly event: AuditEventV02;
  readonly line: number;
}

/** The chain so far, as the checks of one line need it. */
export interface ChainHead {
  readonly head: string | null;
}

/** A problem at a line of the log (or, `where: "anchor"`, of the anchor). */
export function problem(
  line: number,
  code: AuditProblemCode,
  message: string,
  where: "log" | "anchor" = "log",
): AuditProblem {
  return { line, code, message, where };
}

/** A parse issue as a problem: `not_json`, or `schema_invalid` for anything else. */
export function fromIssue(line: number, issue: Issue | undefined, where: "log" | "anchor" = "log"): AuditProblem {
  const code = issue?.code === "not_json" ? "not_json" : "schema_invalid";
  return problem(line, code, issue?.message ?? "invalid event", where);
}

function checkCheckpoint(event: AuditEventV02, line: number, options: VerifyAuditOptions): AuditProblem | undefined {
  const read = readCheckpoint(event);
  if (!read.ok) return fromIssue(line, read.issues[0]);
  const { body, signature } = read.value;
  if (body.head_hash !== event.previous_event_hash || body.count !== line - 1) {
    return problem(
      line,
      "checkpoint_mismatch",
      `checkpoint claims ${body.count} events ending at \`${String(body.head_hash)}\` but stands after line ${line - 1}`,
    );
  }
  if (options.publicKey !== undefined && !verifyCheckpointSignature(body, signature, options.publicKey)) {
    return problem(line, "bad_checkpoint_signature", "checkpoint signature does not verify with the public key");
  }
  return undefined;
}

/** A line whose `previous_event_hash` is not the head: a problem whose code is not known yet. */
export interface BrokenLink {
  readonly line: number;
  readonly claimed: string | null;
  readonly expected: string;
  /** The line's own `event_hash` (it hashes to its content). */
  readonly hash: string;
}

/**
 * Checks one line against the chain so far: §7.4 schema, its own hash, canonical form, the link to the
 * head, and a checkpoint's place and signature. The event when intact, a problem, or a broken link whose
 * code is not known yet.
 */
export function checkLine(
  text: string,
  line: number,
  state: ChainHead,
  options: VerifyAuditOptions,
): AuditProblem | BrokenLink | AuditEventV02 {
  const parsed = parseAuditLine(text);
  if (!parsed.ok) return fromIssue(line, parsed.issues[0]);
  const event = parsed.value;
  const { event_hash: stated, ...body } = event;
  let sealed;
  try {
    sealed = sealAuditLine(body);
  } catch {
    return problem(line, "schema_invalid", "event holds a value that is not valid I-JSON");
  }
  if (sealed.event.event_hash !== stated) {
    return problem(
      line,
      "hash_mismatch",
      `\`event_hash\` does not match the event (computed \`${sealed.event.event_hash}\`)`,
    );
  }
  if (sealed.line !== text) return problem(line, "not_canonical", "line is not in RFC 8785 canonical form");
  if (event.previous_event_hash !== state.head) {
    const expected = state.head === null ? "null (first line)" : `\`${state.head}\``;
    return { line, claimed: event.previous_event_hash, expected, hash: stated };
  }
  if (event.event_type === "checkpoint") return checkCheckpoint(event, line, options) ?? event;
  return event;
}

/**
 * Reads the anchor of the options: a checkpoint carrying the hash of its own content and, with a public
 * key, a valid signature; `undefined` without one; a problem `where: "anchor"` otherwise.
 */
export function readAnchor(options: VerifyAuditOptions): Anchor | AuditProblem | undefined {
  if (options.anchor === undefined) return undefined;
  const parsed = parseAuditLine(options.anchor.trim());
  if (!parsed.ok) return fromIssue(0, parsed.issues[0], "anchor");
  const read = parsed.value.event_type === "checkpoint" ? readCheckpoint(parsed.value) : undefined;
  if (read === undefined || !read.ok) return problem(0, "schema_invalid", "anchor is not a checkpoint", "anchor");
  const line = read.value.body.count + 1;
  const { body, signature } = read.value;
  // The log's line is matched to the anchor by `event_hash` alone, so the anchor's hash must be that of
  // its own content: else a genuine signed body could vouch for any line of a rewritten log.
  const { event_hash: stated, ...rest } = parsed.value;
  let computed;
  try {
    computed = sealAuditLine(rest).event.event_hash;
  } catch {
    return problem(line, "schema_invalid", "anchor holds a value that is not valid I-JSON", "anchor");
  }
  if (computed !== stated) {
    return problem(line, "hash_mismatch", "anchor's `event_hash` does not match its content", "anchor");
  }
  if (options.publicKey !== undefined && !verifyCheckpointSignature(body, signature, options.publicKey)) {
    return problem(line, "bad_checkpoint_signature", "anchor checkpoint signature does not verify", "anchor");
  }
  return { event: parsed.value, line };
}

/** Whether an anchor standing within a verified prefix is that prefix's last checkpoint (same signed body). */
export function anchorIsLastCheckpoint(anchor: Anchor, from: AuditChainPosition): boolean {
  const last = from.lastCheckpoint;
  const body = anchor.event.metadata["checkpoint"] as { count: number; head_hash: string | null; timestamp: string };
  return (
    last !== null &&
    last.line === anchor.line &&
    last.count === body.count &&
    last.headHash === body.head_hash &&
    last.timestamp === body.timestamp
  );
}

/**
 * Whether a verification can continue from `from` with these options: always without an anchor; with
 * one, when it stands after `from` (its line will be read) or is `from`'s last checkpoint. Otherwise
 * (the anchor names a line of the prefix that is not its last checkpoint: a log rewritten, or an
 * anchor older than the prefix) verify from the start: continuing would report `checkpoint_mismatch`.
 */
export function canContinueAuditVerification(from: AuditChainPosition, options: VerifyAuditOptions = {}): boolean {
  const anchor = readAnchor(options);
  if (anchor === undefined || "code" in anchor) return true;
  return anchor.line > from.count || anchorIsLastCheckpoint(anchor, from);
}
