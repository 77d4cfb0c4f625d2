/**
 * Proposal constraints of a domain (`require_diff`, `undo_window_days`, `cooling_period_hours`), applied
 * to the actions the graph file puts in `requires_approval` (the proposals a person approves).
 */
import type { GraphTarget } from "../request/index.js";
import type { GraphDomain, GraphReason } from "./types.js";

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const HOUR_MS = 60 * 60 * 1000;

/** What the proposal constraints say: refuse, defer until a time, or pass with notes. */
export interface ProposalCheck {
  readonly blocked?: GraphReason;
  readonly deferredUntil?: string;
  readonly reasons: readonly GraphReason[];
}

/** A diff is explicit when it has at least one added (`+`) or removed (`-`) line; prose alone is not a diff. */
export function isExplicitDiff(diff: unknown): boolean {
  return typeof diff === "string" && /^[+-]/m.test(diff) && diff.trim().length > 1;
}

function isPresent(text: unknown): boolean {
  return typeof text === "string" && text.trim().length > 0;
}

/** Checks the proposal a target carries against the domain's constraints at time `now`. */
export function checkProposal(domain: GraphDomain, target: GraphTarget, now: Date, what: string): ProposalCheck {
  const proposal = target.proposal;
  if (domain.require_diff === true && !isExplicitDiff(proposal?.diff)) {
    const message = `${what} must carry an explicit before/after diff (lines starting with \`+\` or \`-\`); a description alone is not enough`;
    return { blocked: { code: "diff_required", message }, reasons: [] };
  }
  if (domain.undo_window_days !== undefined && !isPresent(proposal?.undo)) {
    const message = `${what} must document how to undo it (changes stay reversible for ${domain.undo_window_days} days)`;
    return { blocked: { code: "undo_required", message }, reasons: [] };
  }
  const hours = domain.cooling_period_hours;
  if (hours === undefined || hours === 0) return { reasons: [] };
  const proposedAt = proposal?.proposed_at;
  if (typeof proposedAt !== "string" || !ISO_TIME.test(proposedAt) || Number.isNaN(Date.parse(proposedAt))) {
    const message = `${what} has a ${hours}-hour cooling period and needs the ISO-8601 time it was proposed (\`proposed_at\`)`;
    return { blocked: { code: "proposed_at_required", message }, reasons: [] };
  }
  const eligible = Date.parse(proposedAt) + hours * HOUR_MS;
  if (now.getTime() < eligible) {
    const until = new Date(eligible).toISOString();
    const message = `${what} is in its ${hours}-hour cooling period: it cannot take effect before ${until}`;
    return { deferredUntil: until, reasons: [{ code: "cooling_period", message }] };
  }
  const message = `${what} was proposed at ${proposedAt}; its ${hours}-hour cooling period is over`;
  return { reasons: [{ code: "cooling_period_elapsed", message }] };
}
