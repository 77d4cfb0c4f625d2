import type { Issue } from "../issues/index.js";
import { readCheckpoint, verifyCheckpointSignature, type CheckpointPublicKey } from "./checkpoint.js";
import { sealAuditLine, type AuditEventV02 } from "./event.js";
import { MAX_AUDIT_LINE_LENGTH, parseAuditLine } from "./parse-event.js";
import type { AuditProblemCode } from "./problem-codes.js";
import {
  RemainderCheck,
  statedEventHash,
  type AuditCheckpointSummary,
  type AuditRemainder,
} from "./verify-remainder.js";

export type { AuditCheckpointSummary, AuditRemainder } from "./verify-remainder.js";

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

interface Anchor {
  readonly event: AuditEventV02;
  readonly line: number;
}

interface ChainState {
  head: string | null;
  count: number;
  checkpoints: number;
  lastCheckpoint: AuditCheckpointSummary | null;
  /** The state before the last line was taken (`head` is then the line before it): to take it back. */
  before: { head: string | null; checkpoints: number; lastCheckpoint: AuditCheckpointSummary | null } | null;
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

/** A line whose `previous_event_hash` is not the head: a problem whose code is not known yet. */
interface BrokenLink {
  readonly line: number;
  readonly claimed: string | null;
  readonly expected: string;
  /** The line's own `event_hash` (it hashes to its content). */
  readonly hash: string;
}

function checkLine(
  text: string,
  line: number,
  state: ChainState,
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

function readAnchor(options: VerifyAuditOptions): Anchor | AuditProblem | undefined {
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
function anchorIsLastCheckpoint(anchor: Anchor, from: AuditChainPosition): boolean {
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

function summarize(
  state: ChainState,
  options: VerifyAuditOptions,
  found: AuditProblem | null,
  afterProblem: AuditRemainder | null,
): AuditVerification {
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
    afterProblem: found === null ? null : afterProblem,
  };
}

/** The last `size` hashes, for telling `reordered` from `broken_link` when the log cannot be read again. */
class RecentHashes {
  private readonly ring: string[] = [];
  private readonly set = new Set<string>();
  private next = 0;

  constructor(private readonly size: number) {}

  add(hash: string): void {
    if (this.ring.length < this.size) this.ring.push(hash);
    else {
      this.set.delete(this.ring[this.next] as string);
      this.ring[this.next] = hash;
      this.next = (this.next + 1) % this.size;
    }
    this.set.add(hash);
  }

  has(hash: string): boolean {
    return this.set.has(hash);
  }
}

/** What to look for in the lines before a broken link: a line whose `event_hash` is `hash`. */
interface EarlierScan {
  /** Lines to read from the start of the log. */
  readonly lines: number;
  readonly hash: string;
}

/** Whether an intact line's own `event_hash` is `hash` (not a nested member of its metadata). */
function hasEventHash(text: string, hash: string): boolean {
  if (!text.includes(`"event_hash":"${hash}"`)) return false;
  const parsed = parseAuditLine(text);
  return parsed.ok && parsed.value.event_hash === hash;
}

// Why the verifier keeps no set of every hash it has seen (it did until 26 Nov 2026).
//
// Detection needs no memory: a line is accepted only if its `previous_event_hash` is the head, the hash
// of the line just before, so a removed, inserted, moved or duplicated line breaks a link at the first
// line it touches whatever was read before. The set only chose the problem's code once a link was
// broken at line k: `reordered` when the hash the line names is that of another line of the log (moved
// or duplicated lines), `broken_link` when it names none. Lines after k are looked at as they stream
// past (the verifier reads on to the end, holding only the hash it looks for). For lines before k the
// links alone cannot answer: the line names an arbitrary hash (anyone can seal a line naming any hash),
// and whether it is one of h_1..h_{k-1} is a membership question over k-1 independent values, which no
// state smaller than those values answers exactly. So instead of remembering them the verifier reads
// the log again from line 1 (`reread`, only on this failure path, which ends the verification anyway):
// exact and bounded. A source that cannot be read twice falls back on the last RECENT_AUDIT_HASHES
// hashes; a line naming an older one is then reported as `broken_link` (still a failure, at the same
// line).

/**
 * One verification, line by line: the checks of {@link verifyAuditChain} and {@link verifyAuditStream},
 * which only feed it lines. After the first problem it reads on to the end ({@link RemainderCheck}: what
 * can still be told of the rest, and, after a broken link, whether a later line carries the hash it
 * named) and, at the end, may ask for the lines before it ({@link ChainCheck.end}).
 */
class ChainCheck {
  private readonly state: ChainState;
  private readonly anchor: Anchor | undefined;
  private found: AuditProblem | null = null;
  private link: (BrokenLink & { readonly needle: string }) | null = null;
  private readonly recent: RecentHashes | null;
  /** The lines after the first problem in the log (`null` before one, or when none is read after it). */
  private remainder: RemainderCheck | null = null;
  /** A line naming the line before the head: an inserted head's line, if the next line names it. */
  private candidate: { readonly checked: BrokenLink; readonly text: string } | null = null;

  constructor(
    private readonly options: VerifyAuditOptions,
    canReread: boolean,
  ) {
    const from = options.from;
    this.state = {
      head: from?.head ?? null,
      count: from?.count ?? 0,
      checkpoints: from?.checkpoints ?? 0,
      lastCheckpoint: from?.lastCheckpoint ?? null,
      before: null,
    };
    this.recent = canReread ? null : new RecentHashes(RECENT_AUDIT_HASHES);
    const anchor = readAnchor(options);
    if (anchor !== undefined && "code" in anchor) {
      this.found = anchor;
      this.anchor = undefined;
      return;
    }
    this.anchor = anchor;
    if (
      anchor !== undefined &&
      from !== undefined &&
      anchor.line <= from.count &&
      !anchorIsLastCheckpoint(anchor, from)
    ) {
      this.found = problem(
        anchor.line,
        "checkpoint_mismatch",
        "line differs from the signed checkpoint kept beside the log",
      );
    }
  }

  /** Whether more lines are wanted. */
  wants(): boolean {
    return this.found === null || this.remainder !== null;
  }

  /** Reads the lines after line `line` for what they still tell, the first naming `previous`. */
  private readOn(line: number, previous: string | null | undefined): void {
    this.remainder = new RemainderCheck(previous, line + 1, this.options.publicKey);
  }

  /** Takes the next line; returns whether more are wanted. */
  push(text: string): boolean {
    if (this.found !== null) return this.remainder?.push(text) ?? false;
    if (this.candidate !== null) return this.takeCandidate(text);
    if (this.link !== null) {
      // after a broken link: what the rest tells, and does a later line carry the hash it named?
      const more = this.remainder?.push(text) ?? false;
      if (text.includes(this.link.needle)) this.settle(true);
      return more;
    }
    const state = this.state;
    const line = state.count + 1;
    const checked = checkLine(text, line, state, this.options);
    if ("code" in checked) {
      this.found = checked;
      if (text.length <= MAX_AUDIT_LINE_LENGTH) {
        this.readOn(line, statedEventHash(text));
        return true;
      }
      // a line too long to read: its end is not looked for (`/dev/zero`, a file without newlines)
      this.readOn(line, undefined);
      this.remainder?.stop();
      return false;
    }
    if ("expected" in checked) return this.brokenLink(checked, text);
    const anchor = this.anchor;
    if (anchor !== undefined && line === anchor.line && checked.event_hash !== anchor.event.event_hash) {
      this.found = problem(line, "checkpoint_mismatch", "line differs from the signed checkpoint kept beside the log");
      this.readOn(line, checked.event_hash);
      return true;
    }
    if (state.head !== null) this.recent?.add(state.head);
    state.before = { head: state.head, checkpoints: state.checkpoints, lastCheckpoint: state.lastCheckpoint };
    state.head = checked.event_hash;
    state.count = line;
    if (checked.event_type === "checkpoint") {
      const body = checked.metadata["checkpoint"] as { count: number; head_hash: string | null; timestamp: string };
      state.checkpoints++;
      state.lastCheckpoint = { line, count: body.count, headHash: body.head_hash, timestamp: body.timestamp };
    }
    return true;
  }

  /**
   * A line that does not name the head. When it names the line before the head instead (and is not a
   * copy of the head's line), the head's line may stand between two lines that chain to each other:
   * decided by the next line ({@link takeCandidate}). Otherwise the code waits for the rest of the log
   * (`reordered` or `broken_link`, see {@link settle}).
   */
  private brokenLink(checked: BrokenLink, text: string): boolean {
    const before = this.state.before;
    if (before !== null && checked.claimed === before.head && checked.hash !== this.state.head) {
      this.candidate = { checked, text };
      return true;
    }
    return this.linkBroken(checked);
  }

  /**
   * The line after a {@link candidate}: when it names the candidate's line, the chain goes on through
   * that line and the head's line was inserted (`inserted`, reported at that line, which is taken back
   * from the intact lines); else (the candidate's line forks off and the log does not go on from it) the
   * candidate is a broken link like any other.
   */
  private takeCandidate(text: string): boolean {
    const candidate = this.candidate as { readonly checked: BrokenLink; readonly text: string };
    this.candidate = null;
    const next = parseAuditLine(text);
    const before = this.state.before;
    if (!next.ok || next.value.previous_event_hash !== candidate.checked.hash || before === null) {
      this.linkBroken(candidate.checked);
      return this.push(text);
    }
    const state = this.state;
    const planted = state.count;
    const follows = planted === 1 ? "the start of the log" : `line ${planted - 1}`;
    this.found = problem(
      planted,
      "inserted",
      `line ${planted + 1} follows ${follows}, as line ${planted} does, and the log goes on from line ${planted + 1}: line ${planted} was inserted`,
    );
    state.head = before.head;
    state.count = planted - 1;
    state.checkpoints = before.checkpoints;
    state.lastCheckpoint = before.lastCheckpoint;
    state.before = null;
    this.readOn(planted, before.head);
    return (this.remainder?.push(candidate.text) ?? false) && (this.remainder?.push(text) ?? false);
  }

  /** A broken link whose code is not known yet: reads on for the hash it names, and for what the rest tells. */
  private linkBroken(checked: BrokenLink): boolean {
    this.readOn(checked.line, checked.hash);
    if (checked.claimed === null) {
      this.link = { ...checked, needle: "" };
      this.settle(false);
      return true;
    }
    this.link = { ...checked, needle: `"event_hash":"${checked.claimed}"` };
    if (this.recent !== null && this.recent.has(checked.claimed)) this.settle(true);
    return true;
  }

  /**
   * The lines ended. Returns the scan still needed to classify a broken link (when the log can be read
   * again: answer with {@link settle}), else nothing.
   */
  end(): EarlierScan | undefined {
    // a candidate for an inserted line with no line after it: a broken link like any other
    if (this.candidate !== null) {
      this.linkBroken(this.candidate.checked);
      this.candidate = null;
    }
    const link = this.link;
    if (this.found !== null || link === null) return undefined;
    if (this.recent === null && link.claimed !== null) return { lines: link.line - 1, hash: link.claimed };
    this.settle(false);
    return undefined;
  }

  /** Classifies the broken link: `reordered` when the hash it named is another line's. */
  settle(namesAnotherLine: boolean): void {
    const link = this.link;
    if (link === null || this.found !== null) return;
    const { line, claimed, expected } = link;
    this.found = namesAnotherLine
      ? problem(line, "reordered", `event is out of order: it follows \`${claimed}\`, expected ${expected}`)
      : problem(line, "broken_link", `\`previous_event_hash\` is \`${String(claimed)}\`, expected ${expected}`);
  }

  result(): AuditVerification {
    const state = this.state;
    const anchor = this.anchor;
    if (this.found === null && anchor !== undefined && state.count < anchor.line) {
      const message = `log ends at line ${state.count} but a signed checkpoint records line ${anchor.line}: events were removed`;
      this.found = problem(state.count + 1, "truncated_after_checkpoint", message);
    }
    return summarize(state, this.options, this.found, this.remainder?.result() ?? null);
  }
}

/** Whether a sync iterable gives a fresh iteration each time (an array does; a generator does not). */
function reiterable(lines: AuditLines): lines is Iterable<string> {
  return Symbol.iterator in lines && (lines[Symbol.iterator]() as unknown) !== lines;
}

/**
 * Verifies an audit log given as its lines (without newlines; drop the empty string after a final
 * newline). Each line must parse against §7.4, be in canonical form, carry the hash of its own content
 * and chain to the line before; each checkpoint must match its place and, with a public key, its
 * signature. With an `anchor`, the log must reach it. Stops at the first problem. Never throws.
 *
 * Holds one line at a time: give it a generator to verify a log larger than memory (or use
 * {@link verifyAuditStream} for a file or a database). After a broken link it reads the lines after it,
 * and an array's lines before it again (a generator's, or lines after `from`, cannot be: see
 * {@link VerifyAuditStreamOptions.reread}).
 */
export function verifyAuditChain(lines: Iterable<string>, options: VerifyAuditOptions = {}): AuditVerification {
  // lines after `from` are not the log from line 1: the lines before a broken link are then not at hand
  const again = options.from === undefined && reiterable(lines) ? lines : undefined;
  const check = new ChainCheck(options, again !== undefined);
  if (check.wants()) {
    const iterator = lines[Symbol.iterator]();
    for (let next = iterator.next(); !next.done; next = iterator.next()) if (!check.push(next.value)) break;
  }
  const scan = check.end();
  if (scan !== undefined && again !== undefined) {
    let n = 0;
    let found = false;
    for (const text of again) {
      if (++n > scan.lines || (found = hasEventHash(text, scan.hash))) break;
    }
    check.settle(found);
  }
  return check.result();
}

/**
 * {@link verifyAuditChain} over lines that arrive asynchronously (a file read line by line, rows read
 * page by page), with the same checks and the same results, holding one line at a time. Give `reread`
 * when the source can be opened again (see {@link VerifyAuditStreamOptions.reread}). Rejects only when
 * reading the lines fails.
 */
export async function verifyAuditStream(
  lines: AuditLines,
  options: VerifyAuditStreamOptions = {},
): Promise<AuditVerification> {
  const reread = options.reread ?? (options.from === undefined && reiterable(lines) ? () => lines : undefined);
  const check = new ChainCheck(options, reread !== undefined);
  if (check.wants()) {
    outer: for await (const item of lines) {
      if (typeof item === "string") {
        if (!check.push(item)) break;
      } else for (const text of item) if (!check.push(text)) break outer;
    }
  }
  const scan = check.end();
  if (scan !== undefined && reread !== undefined) {
    let n = 0;
    let found = false;
    outer: for await (const item of reread()) {
      for (const text of typeof item === "string" ? [item] : item) {
        if (++n > scan.lines || (found = hasEventHash(text, scan.hash))) break outer;
      }
    }
    check.settle(found);
  }
  return check.result();
}
