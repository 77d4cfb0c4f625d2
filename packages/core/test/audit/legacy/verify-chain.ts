// The chain verifier as it was before 26 Nov 2026 (commit 0cb4af1: whole log in memory, a `seen` set of every
// hash), kept only for verify-stream.test.ts, which holds the streaming verifier to the same results. Not used by ACP.
import type { Issue } from "../../../src/issues/index.js";
import { readCheckpoint, verifyCheckpointSignature, type CheckpointPublicKey } from "../../../src/audit/checkpoint.js";
import { sealAuditLine, type AuditEventV02 } from "../../../src/audit/event.js";
import { parseAuditLine } from "../../../src/audit/parse-event.js";
import type { AuditProblemCode } from "../../../src/audit/problem-codes.js";

/** The first thing wrong with a log. */
export interface AuditProblem {
  /** 1-based line of the log; for a problem in the anchor itself, the line the anchor stands for. */
  readonly line: number;
  readonly code: AuditProblemCode;
  /** One lowercase line a person can act on. */
  readonly message: string;
  /** `anchor` when the problem is in the checkpoint kept beside the log rather than in the log. */
  readonly where: "log" | "anchor";
}

/** A checkpoint as the verifier saw it. */
export interface AuditCheckpointSummary {
  readonly line: number;
  readonly count: number;
  readonly headHash: string | null;
  readonly timestamp: string;
}

/** The outcome of {@link verifyAuditChain}. */
export interface AuditVerification {
  /** True when no problem was found. */
  readonly ok: boolean;
  /** Lines verified intact (all of them when `ok`). */
  readonly count: number;
  /** `event_hash` of the last intact line; `null` for an empty log. */
  readonly head: string | null;
  readonly checkpoints: number;
  readonly lastCheckpoint: AuditCheckpointSummary | null;
  /** Intact lines after the last checkpoint: not yet covered by a signature. */
  readonly eventsAfterLastCheckpoint: number;
  /** Whether checkpoint signatures were checked (a public key was given). */
  readonly signaturesChecked: boolean;
  readonly problem: AuditProblem | null;
}

/** Options of {@link verifyAuditChain}. */
export interface VerifyAuditOptions {
  /** The Ed25519 key checkpoints must be signed with; without it signatures are not checked. */
  readonly publicKey?: CheckpointPublicKey;
  /**
   * The latest checkpoint line as kept beside the log (`audit.jsonl.checkpoint`). The log must hold it
   * at its place; a log that ends before it was truncated after a checkpoint.
   */
  readonly anchor?: string;
}

interface Anchor {
  readonly event: AuditEventV02;
  readonly line: number;
}

interface ChainState {
  head: string | null;
  count: number;
  checkpoints: number;
  lastCheckpoint: AuditCheckpointSummary | null;
  readonly seen: Set<string>;
}

function problem(line: number, code: AuditProblemCode, message: string, where: "log" | "anchor" = "log"): AuditProblem {
  return { line, code, message, where };
}

function fromIssue(line: number, issue: Issue | undefined, where: "log" | "anchor" = "log"): AuditProblem {
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

function checkLink(event: AuditEventV02, line: number, state: ChainState, rest: () => string[]): AuditProblem {
  const claimed = event.previous_event_hash;
  const expected = state.head === null ? "null (first line)" : `\`${state.head}\``;
  const later = claimed !== null && rest().some((l) => l.includes(`"event_hash":"${claimed}"`));
  if ((claimed !== null && state.seen.has(claimed)) || later) {
    return problem(line, "reordered", `event is out of order: it follows \`${claimed}\`, expected ${expected}`);
  }
  return problem(line, "broken_link", `\`previous_event_hash\` is \`${String(claimed)}\`, expected ${expected}`);
}

function checkLine(
  text: string,
  line: number,
  state: ChainState,
  options: VerifyAuditOptions,
  rest: () => string[],
): AuditProblem | AuditEventV02 {
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
  if (event.previous_event_hash !== state.head) return checkLink(event, line, state, rest);
  if (event.event_type === "checkpoint") return checkCheckpoint(event, line, options) ?? event;
  return event;
}

function readAnchor(options: VerifyAuditOptions): Anchor | AuditProblem | undefined {
  if (options.anchor === undefined) return undefined;
  const parsed = parseAuditLine(options.anchor.trim());
  if (!parsed.ok) return fromIssue(0, parsed.issues[0], "anchor");
  const read = parsed.value.event_type === "checkpoint" ? readCheckpoint(parsed.value) : undefined;
  if (read === undefined || !read.ok) return problem(0, "schema_invalid", "anchor is not a checkpoint", "anchor");
  const line = read.value.body.count + 1;
  const { body, signature } = read.value;
  if (options.publicKey !== undefined && !verifyCheckpointSignature(body, signature, options.publicKey)) {
    return problem(line, "bad_checkpoint_signature", "anchor checkpoint signature does not verify", "anchor");
  }
  return { event: parsed.value, line };
}

function summarize(state: ChainState, options: VerifyAuditOptions, found: AuditProblem | null): AuditVerification {
  const last = state.lastCheckpoint;
  return {
    ok: found === null,
    count: state.count,
    head: state.head,
    checkpoints: state.checkpoints,
    lastCheckpoint: last,
    eventsAfterLastCheckpoint: state.count - (last?.line ?? 0),
    signaturesChecked: options.publicKey !== undefined,
    problem: found,
  };
}

/**
 * Verifies an audit log given as its lines (without newlines; drop the empty string after a final
 * newline). Each line must parse against §7.4, be in canonical form, carry the hash of its own content
 * and chain to the line before; each checkpoint must match its place and, with a public key, its
 * signature. With an `anchor`, the log must reach it. Stops at the first problem. Never throws.
 */
export function legacyVerifyAuditChain(lines: Iterable<string>, options: VerifyAuditOptions = {}): AuditVerification {
  const state: ChainState = { head: null, count: 0, checkpoints: 0, lastCheckpoint: null, seen: new Set() };
  const anchor = readAnchor(options);
  if (anchor !== undefined && "code" in anchor) return summarize(state, options, anchor);
  const iterator = lines[Symbol.iterator]();
  let remaining: string[] | undefined;
  const rest = (): string[] => (remaining ??= [...{ [Symbol.iterator]: () => iterator }]);
  for (let next = iterator.next(); !next.done; next = iterator.next()) {
    const line = state.count + 1;
    const checked = checkLine(next.value, line, state, options, rest);
    if ("code" in checked) return summarize(state, options, checked);
    if (anchor !== undefined && line === anchor.line && checked.event_hash !== anchor.event.event_hash) {
      return summarize(
        state,
        options,
        problem(line, "checkpoint_mismatch", "line differs from the signed checkpoint kept beside the log"),
      );
    }
    if (state.head !== null) state.seen.add(state.head);
    state.head = checked.event_hash;
    state.count = line;
    if (checked.event_type === "checkpoint") {
      const body = checked.metadata["checkpoint"] as { count: number; head_hash: string | null; timestamp: string };
      state.checkpoints++;
      state.lastCheckpoint = { line, count: body.count, headHash: body.head_hash, timestamp: body.timestamp };
    }
  }
  if (anchor !== undefined && state.count < anchor.line) {
    const message = `log ends at line ${state.count} but a signed checkpoint records line ${anchor.line}: events were removed`;
    return summarize(state, options, problem(state.count + 1, "truncated_after_checkpoint", message));
  }
  return summarize(state, options, null);
}
