/**
 * Proposal constraints of a domain (`require_diff`, `undo_window_days`, `cooling_period_hours`), applied
 * to the actions the graph file puts in `requires_approval` (the proposals a person approves). The cooling
 * period counts from when ACP first saw the proposal (`context.proposals`), not from the proposer's word.
 */
import type { GraphTarget } from "../request/index.js";
import { isExplicitDiff } from "./explicit-diff.js";
import { proposalKey, proposalSighting } from "./proposal-ledger.js";
import { DEFAULT_CLOCK_SKEW_SECONDS } from "./trusted-channel.js";
import type { GraphCall, GraphContext, GraphDomain, GraphReason } from "./types.js";

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const HOUR_MS = 60 * 60 * 1000;

/** What the proposal constraints say: refuse, defer until a time, or pass with notes. */
export interface ProposalCheck {
  readonly blocked?: GraphReason;
  readonly deferredUntil?: string;
  readonly reasons: readonly GraphReason[];
}

function isPresent(text: unknown): boolean {
  return typeof text === "string" && text.trim().length > 0;
}

/**
 * When ACP first saw the proposal: the ledger's answer, or `now` without a ledger (a one-off check has seen
 * it only now). Throws when the ledger answers no valid time (the check then refuses: `graph_error`).
 */
function firstSeen(target: GraphTarget & { readonly call?: GraphCall }, context: GraphContext): number {
  if (context.proposals === undefined) return context.now.getTime();
  const seen = context.proposals.firstSeen(proposalKey(target), context.now, proposalSighting(target));
  if (seen instanceof Promise) {
    seen.catch(() => undefined); // told below; the store's error is the caller's to wait for
    throw new Error("the proposal ledger answers asynchronously: judge through the graph source (graphSource)");
  }
  const ms = seen instanceof Date ? seen.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new Error("the proposal ledger answered no valid time");
  return ms;
}

/** Checks the proposal a target carries against the domain's constraints at the context's time. */
export function checkProposal(
  domain: GraphDomain,
  target: GraphTarget & { readonly call?: GraphCall },
  context: GraphContext,
  what: string,
): ProposalCheck {
  const proposal = target.proposal;
  if (domain.require_diff === true && !isExplicitDiff(proposal?.diff)) {
    const message = `${what} must carry an explicit before/after diff (only diff lines: \`-\` before and \`+\` after, or a unified diff with its \`@@\` hunk header); a description alone is not enough`;
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
  // the period counts from the later of the proposer's time and ACP's own first sight: a back-dated
  // proposed_at shortens nothing (and is not refused: a restart or another node saw it later, and the
  // proposal must still pass once the later sight is old enough)
  const seen = firstSeen(target, context);
  const skew = context.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const claimed = Date.parse(proposedAt);
  const notes: GraphReason[] = [];
  if (!(Math.abs(claimed - seen) <= skew * 1000)) {
    const message =
      `${what} says it was proposed at ${proposedAt}, but ACP first saw it at ${new Date(seen).toISOString()}, ` +
      `more than ${skew} seconds apart: the cooling period counts from the later of the two`;
    notes.push({ code: "proposed_at_mismatch", message });
  }
  const from = Math.max(claimed, seen);
  const eligible = from + hours * HOUR_MS;
  if (context.now.getTime() < eligible) {
    const until = new Date(eligible).toISOString();
    const message = `${what} is in its ${hours}-hour cooling period: it cannot take effect before ${until}`;
    return { deferredUntil: until, reasons: [{ code: "cooling_period", message }, ...notes] };
  }
  const message = `${what} counts as proposed at ${new Date(from).toISOString()}; its ${hours}-hour cooling period is over`;
  return { reasons: [{ code: "cooling_period_elapsed", message }, ...notes] };
}
