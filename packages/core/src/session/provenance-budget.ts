/**
 * One decision's tracing work. Tracing a call costs its pieces times the session's text (`deriveProvenance`
 * scans each entry's text for each piece), so one decision spends a bounded number of work units on it; what
 * the budget does not cover is not judged, and the caller asks instead.
 */

/**
 * Work units one decision may spend tracing its arguments: about one per character of session text scanned
 * (and a few per comparison). Tracing costs (pieces × the session's text): without a bound, one call carrying
 * 100,000 addresses against a full session store would hold the proxy for hours. 2^28 is at most about a
 * third of a second here; a call of 250 pieces in a session that read a million characters fits, and so do
 * four pieces against the largest store a session keeps (64 million characters).
 */
export const PROVENANCE_WORK_BUDGET = 2 ** 28;

/** What is left of one decision's tracing work; `exceeded` once a piece went untraced for want of it. */
export interface ProvenanceBudget {
  left: number;
  exceeded: boolean;
}

/** A fresh budget for one decision. */
export function createProvenanceBudget(units: number = PROVENANCE_WORK_BUDGET): ProvenanceBudget {
  return { left: units, exceeded: false };
}

/**
 * The echoes of a call whose arguments could not all be traced ({@link ProvenanceEntryOptions.echoes}): every
 * piece counts as echoed, so its trusted answer vouches for none of what it says about them.
 */
class EveryPiece extends Set<string> {
  constructor() {
    super(["*"]);
  }
  override has(): boolean {
    return true;
  }
}

/** Echoes that hold every piece: see {@link EveryPiece}. */
export const EVERY_PIECE: ReadonlySet<string> = new EveryPiece();
