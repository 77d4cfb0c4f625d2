/**
 * When ACP first saw a proposal. A cooling period counts from that time, not from the `proposed_at` the
 * proposer wrote (which an agent could back-date): the graph asks a ledger handed to it in the context.
 */
import { createHash } from "node:crypto";
import type { GraphProposal } from "../request/index.js";
import { canonicalJson } from "./canonical-json.js";
import type { GraphCall } from "./types.js";

/** Where the first sight of each proposal is kept (in memory in a process; a store may keep it longer). */
export interface ProposalLedger {
  /**
   * The time the proposal `key` was first seen; when it was never seen, records `now` and returns it. A
   * ledger that forgets (a restart, a full ledger) only makes a cooling period start again.
   */
  firstSeen(key: string, now: Date): Date;
}

/** Options of `createMemoryProposalLedger`. */
export interface MemoryProposalLedgerOptions {
  /** Most proposals kept; past it the oldest first sight is forgotten. Default 10,000. */
  readonly maxEntries?: number;
}

/** Default bound of a memory ledger. */
export const MAX_PROPOSAL_LEDGER_ENTRIES = 10_000;

/** A ledger in memory, bounded: an agent sending many proposals pushes out the oldest (which then start again). */
export function createMemoryProposalLedger(options: MemoryProposalLedgerOptions = {}): ProposalLedger {
  const max = Math.max(1, Math.floor(options.maxEntries ?? MAX_PROPOSAL_LEDGER_ENTRIES));
  const seen = new Map<string, number>();
  return {
    firstSeen(key, now) {
      const known = seen.get(key);
      if (known !== undefined) return new Date(known);
      const at = now.getTime();
      if (Number.isNaN(at)) throw new Error("invalid time for a proposal's first sight");
      while (seen.size >= max) {
        const oldest = seen.keys().next();
        if (oldest.done === true) break;
        seen.delete(oldest.value);
      }
      seen.set(key, at);
      return new Date(at);
    },
  };
}

/** What identifies one proposal: where it applies, what it changes and how it is undone, and the call. */
export interface ProposalSubject {
  readonly domain: string;
  readonly action: string;
  readonly proposal?: GraphProposal;
  readonly call?: GraphCall;
}

/**
 * The ledger key of a proposal: `sha256:` + hex of the canonical JSON of its domain, action, diff, undo and
 * (for a tool call) the call. `proposed_at` and the confidence are not in it: the same change sent again
 * with another time or confidence is the same proposal.
 */
export function proposalKey(subject: ProposalSubject): string {
  const { diff, undo } = subject.proposal ?? {};
  const statement: Record<string, unknown> = { domain: subject.domain, action: subject.action, diff, undo };
  if (subject.call !== undefined) {
    const { tool, server, arguments: args } = subject.call;
    statement["call"] = { tool, server, arguments: args };
  }
  return `sha256:${createHash("sha256").update(canonicalJson(statement), "utf8").digest("hex")}`;
}
