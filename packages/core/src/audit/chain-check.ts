import { checkEventConsent } from "./consent-check.js";
import { MAX_AUDIT_LINE_LENGTH, parseAuditLine } from "./parse-event.js";
import { anchorIsLastCheckpoint, checkLine, problem, readAnchor, type Anchor, type BrokenLink } from "./verify-line.js";
import {
  RemainderCheck,
  statedEventHash,
  type AuditCheckpointSummary,
  type AuditRemainder,
} from "./verify-remainder.js";
import {
  MAX_LISTED_UNCHECKED_CONSENT,
  RECENT_AUDIT_HASHES,
  type AuditConsentCount,
  type AuditProblem,
  type AuditVerification,
  type VerifyAuditOptions,
} from "./verify-types.js";

interface ChainState {
  head: string | null;
  count: number;
  checkpoints: number;
  lastCheckpoint: AuditCheckpointSummary | null;
  /** The state before the last line was taken (`head` is then the line before it): to take it back. */
  before: { head: string | null; checkpoints: number; lastCheckpoint: AuditCheckpointSummary | null } | null;
}

function summarize(
  state: ChainState,
  options: VerifyAuditOptions,
  found: AuditProblem | null,
  afterProblem: AuditRemainder | null,
  consent: AuditConsentCount,
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
    consentResponses: options.publicKey === undefined ? null : { ...consent, notCheckable: [...consent.notCheckable] },
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
export function hasEventHash(text: string, hash: string): boolean {
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
export class ChainCheck {
  private readonly state: ChainState;
  private readonly anchor: Anchor | undefined;
  private found: AuditProblem | null = null;
  private link: (BrokenLink & { readonly needle: string }) | null = null;
  private readonly recent: RecentHashes | null;
  /** The lines after the first problem in the log (`null` before one, or when none is read after it). */
  private remainder: RemainderCheck | null = null;
  /** A line naming the line before the head: an inserted head's line, if the next line names it. */
  private candidate: { readonly checked: BrokenLink; readonly text: string } | null = null;
  /** Consent responses of the intact lines read, checked with the public key or not checkable. */
  private readonly consent: {
    checked: number;
    unchecked: number;
    notCheckable: AuditConsentCount["notCheckable"][number][];
  } = { checked: 0, unchecked: 0, notCheckable: [] };

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
      this.readWholeLog();
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
      this.readWholeLog();
    }
  }

  /**
   * The problem is found before any line is read (the anchor's own, or an anchor within a continued
   * prefix): every line of the log is read for what it tells, so a bad anchor hides nothing of the log.
   */
  private readWholeLog(): void {
    const from = this.options.from;
    this.remainder = new RemainderCheck(from?.head ?? null, (from?.count ?? 0) + 1, this.options.publicKey);
    if (from !== undefined) this.remainder.countIntactPrefix(from);
  }

  /** Whether more lines are wanted. */
  wants(): boolean {
    return this.found === null || this.remainder !== null;
  }

  /** Reads the lines after line `line` for what they still tell, the first naming `previous`. */
  private readOn(line: number, previous: string | null | undefined): void {
    // an anchor whose line the intact lines did not reach is looked for among the rest
    const anchor = this.anchor;
    const look =
      anchor !== undefined && anchor.line > this.state.count
        ? { hash: anchor.event.event_hash, line: anchor.line }
        : undefined;
    this.remainder = new RemainderCheck(previous, line + 1, this.options.publicKey, look);
    // the problem's own line may carry the anchor's hash (a line edited in place, its hash kept)
    if (look !== undefined && previous === look.hash) this.remainder.anchorFoundAt(line);
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
    const publicKey = this.options.publicKey;
    if (publicKey !== undefined) {
      const consent = checkEventConsent(checked, publicKey);
      if (consent.status === "invalid") {
        this.found = problem(line, "consent_signature_invalid", `consent response does not verify: ${consent.message}`);
        this.readOn(line, checked.event_hash);
        return true;
      }
      if (consent.status === "valid") this.consent.checked++;
      else if (consent.status === "unchecked") {
        this.consent.unchecked++;
        if (this.consent.notCheckable.length < MAX_LISTED_UNCHECKED_CONSENT)
          this.consent.notCheckable.push({
            line,
            why: consent.why,
            ...(consent.signatureChecked === true ? { signatureChecked: true as const } : {}),
          });
      }
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
    return summarize(state, this.options, this.found, this.remainder?.result() ?? null, this.consent);
  }
}
