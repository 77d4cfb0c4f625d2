/**
 * The audit chain's verification as the service answers it (`GET /v1/audit/verify`, the console's audit
 * page): shared by concurrent callers, and continued from where the last one ended instead of started over.
 */
import { MAX_LISTED_UNCHECKED_CONSENT, type AuditConsentCount, type AuditVerification } from "@acp/core";

/** One verification by a {@link ChainSource}, and where it ended. */
export interface SourceVerification<P> {
  readonly verification: AuditVerification;
  /** Where the verified lines end, to continue from; absent when the result cannot be continued. */
  readonly at?: P;
}

/** An ok verification and where it ended. */
export interface VerifiedPrefix<P> {
  readonly verification: AuditVerification;
  readonly at: P;
}

/** Reads and verifies one audit chain (a file, a table). */
export interface ChainSource<P> {
  /** Verifies the whole chain, or, with `from`, only the lines after that prefix. */
  verify(from?: VerifiedPrefix<P>): Promise<SourceVerification<P>>;
  /**
   * Whether the prefix is still there: its last line unchanged at its place (a file rewritten, replaced
   * or cut, rows deleted or rewritten up to it, fail this) and the anchor, if any, not within it unless
   * it is its last checkpoint.
   */
  holds(prefix: VerifiedPrefix<P>): Promise<boolean>;
}

/** Options of {@link continuedVerification}. */
export interface ContinuedVerificationOptions {
  /**
   * A verification of the whole chain runs (in the background, the answer not waiting for it) when the
   * last one is older than this (default 10 minutes): an old line edited in place without changing its
   * length or what follows it is found by that one only.
   */
  readonly fullEveryMs?: number;
  /** Milliseconds now (default `Date.now`). */
  readonly now?: () => number;
}

/** A chain's verification, continued. */
export interface ContinuedVerification {
  /** The chain's verification: the whole chain's result, reading only what was appended since the last one. */
  readonly verify: () => Promise<AuditVerification>;
  /** Resolves once no verification runs (the background one included); for tests. */
  readonly idle: () => Promise<void>;
}

/**
 * The consent responses of a prefix and of the lines verified after it, as one count: the verifier counts
 * only the lines it read (`from`), and the answer is the whole chain's, as `acp audit verify` gives it.
 */
function addConsentCounts(before: AuditConsentCount | null, after: AuditConsentCount | null): AuditConsentCount | null {
  if (before === null || after === null) return after;
  return {
    checked: before.checked + after.checked,
    unchecked: before.unchecked + after.unchecked,
    notCheckable: [...before.notCheckable, ...after.notCheckable].slice(0, MAX_LISTED_UNCHECKED_CONSENT),
  };
}

/** A verification continued from `from`, its consent responses counted over the whole chain. */
function continuedFrom<P>(result: SourceVerification<P>, from: VerifiedPrefix<P>): SourceVerification<P> {
  const consentResponses = addConsentCounts(from.verification.consentResponses, result.verification.consentResponses);
  return { ...result, verification: { ...result.verification, consentResponses } };
}

/**
 * Verifies a chain the first time, then continues from where the last ok verification ended: only the
 * lines appended since are read and checked, after checking the last verified line is still at its
 * place ({@link ChainSource.holds}); when it is not (the chain was rewritten, replaced or cut) the
 * whole chain is verified again. Memory: one line (or page) at a time and the last verified line. Callers
 * that arrive while a verification runs share it. A verification that found a problem is not continued:
 * each call verifies the whole chain again until it is intact. A full verification also runs every
 * `fullEveryMs` in the background; when it finds a problem, the next call verifies the whole chain.
 */
export function continuedVerification<P>(
  source: ChainSource<P>,
  options: ContinuedVerificationOptions = {},
): ContinuedVerification {
  const fullEveryMs = options.fullEveryMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  let prefix: VerifiedPrefix<P> | null = null;
  /** Bumped when a background verification found a problem: a run begun before must not remember its prefix. */
  let epoch = 0;
  let lastFull = Number.NEGATIVE_INFINITY;
  let running: Promise<AuditVerification> | null = null;
  let background: Promise<void> | null = null;

  const keep = (result: SourceVerification<P>, began: number): AuditVerification => {
    if (began === epoch) {
      prefix =
        result.verification.ok && result.at !== undefined ? { verification: result.verification, at: result.at } : null;
    }
    return result.verification;
  };

  const checkAll = (): void => {
    lastFull = now();
    const began = epoch;
    background = source
      .verify()
      .then(
        (result) => result.verification.ok,
        () => false,
      )
      .then((ok) => {
        if (!ok && began === epoch) {
          epoch++;
          prefix = null;
        }
      })
      .finally(() => {
        background = null;
      });
  };

  const run = async (): Promise<AuditVerification> => {
    const began = epoch;
    const from = prefix;
    try {
      if (from === null || !(await source.holds(from))) {
        lastFull = now();
        return keep(await source.verify(), began);
      }
      const result = keep(continuedFrom(await source.verify(from), from), began);
      if (background === null && now() - lastFull >= fullEveryMs) checkAll();
      return result;
    } catch (err) {
      if (began === epoch) prefix = null;
      throw err;
    }
  };

  return {
    verify: () => {
      running ??= run().finally(() => {
        running = null;
      });
      return running;
    },
    idle: async () => {
      while (running !== null || background !== null) await Promise.allSettled([running, background]);
    },
  };
}
