import { ChainCheck, hasEventHash } from "./chain-check.js";
import type { AuditLines, AuditVerification, VerifyAuditOptions, VerifyAuditStreamOptions } from "./verify-types.js";

export type { AuditCheckpointSummary, AuditRemainder } from "./verify-remainder.js";
export {
  MAX_LISTED_UNCHECKED_CONSENT,
  RECENT_AUDIT_HASHES,
  type AuditChainPosition,
  type AuditConsentCount,
  type AuditConsentUnchecked,
  type AuditLines,
  type AuditProblem,
  type AuditVerification,
  type VerifyAuditOptions,
  type VerifyAuditStreamOptions,
} from "./verify-types.js";
export { canContinueAuditVerification } from "./verify-line.js";

/** Whether a sync iterable gives a fresh iteration each time (an array does; a generator does not). */
function reiterable(lines: AuditLines): lines is Iterable<string> {
  return Symbol.iterator in lines && (lines[Symbol.iterator]() as unknown) !== lines;
}

/**
 * Verifies an audit log given as its lines (without newlines; drop the empty string after a final
 * newline). Each line must parse against §7.4, be in canonical form, carry the hash of its own content
 * and chain to the line before; each checkpoint must match its place and, with a public key, its
 * signature. With an `anchor`, the log must reach it. Reports the first problem, then reads on to tell
 * what it can of the lines after it (`afterProblem`). Never throws.
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
