import type { CheckpointPublicKey } from "./checkpoint.js";
import type { AuditProblemCode } from "./problem-codes.js";
import type { AuditCheckpointSummary, AuditRemainder } from "./verify-remainder.js";

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

/**
 * Where a verification of an intact prefix of the log stands: what {@link VerifyAuditOptions.from}
 * continues from. Every {@link AuditVerification} with `ok` is one.
 */
export interface AuditChainPosition {
  readonly count: number;
  readonly head: string | null;
  readonly checkpoints: number;
  readonly lastCheckpoint: AuditCheckpointSummary | null;
}

/**
 * Why a consent response in an event could not be checked with the public key: the action it is signed over
 * was withheld (`withheld`: redaction would have changed it), is not in the event (`missing`: written before
 * events recorded it), or holds a value cut to fit the line (`omitted`: replaced by its length and SHA-256).
 */
export type AuditConsentUnchecked = "withheld" | "missing" | "omitted";

/** How many consent responses in events are listed as not checkable at most (the count goes on). */
export const MAX_LISTED_UNCHECKED_CONSENT = 1000;

/** How many consent responses in events were checked with the public key, and how many could not be, and why. */
export interface AuditConsentCount {
  readonly checked: number;
  readonly unchecked: number;
  /**
   * Each response that could not be checked, in log order: its line and why (the first
   * {@link MAX_LISTED_UNCHECKED_CONSENT}; `unchecked` counts them all).
   */
  readonly notCheckable: readonly {
    readonly line: number;
    readonly why: AuditConsentUnchecked;
    /**
     * `omitted` only: the response's signature was still checked, against the `consent_action_hash` recorded
     * beside the cut action (a response edited in the log fails), though the cut action cannot be matched to it.
     */
    readonly signatureChecked?: true;
  }[];
}

/** The outcome of {@link verifyAuditChain}. */
export interface AuditVerification extends AuditChainPosition {
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
  /**
   * The signed consent responses of `consent_approved` and `consent_denied` events among the intact lines
   * read: `checked` verified with the public key against the action recorded beside them, `unchecked`
   * could not be (the action withheld as redacted, cut to fit the line, or an event written before actions
   * were recorded), each listed with its line and why in `notCheckable`. `null` without a public key. With
   * `from`, the lines read this time only.
   */
  readonly consentResponses: AuditConsentCount | null;
  readonly problem: AuditProblem | null;
  /**
   * With a problem in the log: what could still be told of the lines after it (how many, how many link
   * up, whether later checkpoints' signatures verify on their own). `null` when intact, and when no line
   * after the problem was read (a problem of the anchor, found before the log is read; a log that ends
   * before the anchor's line). It never makes the log intact.
   */
  readonly afterProblem: AuditRemainder | null;
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
  /**
   * Continue a verification: the lines given are those after a prefix verified intact before (this is
   * that verification, or its `count`, `head`, `checkpoints` and `lastCheckpoint`), numbered from
   * `count + 1`. The caller vouches that the prefix is unchanged (see {@link canContinueAuditVerification}
   * for the anchor). With `from`, the result is the one a verification of the whole log would give.
   */
  readonly from?: AuditChainPosition;
}

/**
 * Lines of a log, in order, without their newlines: an array, a generator, a stream of lines. A stream may
 * also give lines in batches (an array counts as its lines in order: a chunk of a file, a page of rows),
 * which saves a turn of the async iteration per line.
 */
export type AuditLines = Iterable<string> | AsyncIterable<string | readonly string[]>;

/** Options of {@link verifyAuditStream}. */
export interface VerifyAuditStreamOptions extends VerifyAuditOptions {
  /**
   * Opens the log again from line 1 (also with `from`: the whole log). Read only after a broken link, to tell a line that names an
   * earlier line (`reordered`) from one that names none (`broken_link`) without remembering every
   * hash. Without it (and when `lines` cannot be iterated twice), the verifier remembers the last
   * {@link RECENT_AUDIT_HASHES} hashes instead, and a line that names an older one is `broken_link`.
   */
  readonly reread?: () => AuditLines;
}

/**
 * How many recent hashes a verifier keeps when it cannot read the log again (a one-shot iterator
 * without `reread`): about 1 MB.
 */
export const RECENT_AUDIT_HASHES = 8192;
