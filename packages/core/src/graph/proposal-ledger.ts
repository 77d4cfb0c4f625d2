/**
 * When ACP first saw a proposal. A cooling period counts from that time, not from the `proposed_at` the
 * proposer wrote (which an agent could back-date): the graph asks a ledger handed to it in the context.
 */
import { createHash } from "node:crypto";
import type { GraphProposal } from "../request/index.js";
import { canonicalJson } from "./canonical-json.js";
import type { GraphCall } from "./types.js";

/**
 * What a ledger may keep beside a first sight, for the operator to see the proposal while it cools
 * (`acp graph review --status`): where it applies, what it changes, how it is undone, which call carried it.
 */
export interface ProposalSighting {
  readonly domain: string;
  readonly action: string;
  /** The time the proposer wrote (`proposed_at`), as written. */
  readonly proposed_at?: string;
  readonly diff?: string;
  readonly undo?: string;
  readonly tool?: string;
  readonly server?: string;
}

/**
 * Where the first sight of each proposal is kept: in memory in a process, or in the state database
 * (`state.db`, PostgreSQL: `@acp/store`) so that a restart or another node counts from the same first sight.
 */
export interface ProposalLedger {
  /**
   * The time the proposal `key` was first seen; when it was never seen, records `now` (and `sighting`, when
   * the ledger keeps it) and returns it. A ledger that forgets (a full ledger) only makes a cooling period
   * start again. A store answers asynchronously: `checkConsentGraph` then refuses (`graph_error`), and the
   * pipeline's graph source (`graphSource`) waits for the answer.
   */
  firstSeen(key: string, now: Date, sighting?: ProposalSighting): Date | Promise<Date>;
}

/** The sighting of a proposal as a ledger keeps it (`proposed_at`, diff, undo only when they are strings). */
export function proposalSighting(subject: ProposalSubject): ProposalSighting {
  const { proposed_at, diff, undo } = subject.proposal ?? {};
  const text = (value: unknown): value is string => typeof value === "string";
  return {
    domain: subject.domain,
    action: subject.action,
    ...(text(proposed_at) ? { proposed_at } : {}),
    ...(text(diff) ? { diff } : {}),
    ...(text(undo) ? { undo } : {}),
    ...(text(subject.call?.tool) ? { tool: subject.call.tool } : {}),
    ...(text(subject.call?.server) ? { server: subject.call.server } : {}),
  };
}

/** Options of `createMemoryProposalLedger`. */
export interface MemoryProposalLedgerOptions {
  /** Most proposals kept; past it the oldest first sight is forgotten. Default 10,000. */
  readonly maxEntries?: number;
}

/** Default bound of a memory ledger. */
export const MAX_PROPOSAL_LEDGER_ENTRIES = 10_000;

/** The memory ledger answers synchronously. */
export interface MemoryProposalLedger extends ProposalLedger {
  firstSeen(key: string, now: Date): Date;
}

/** A ledger in memory, bounded: an agent sending many proposals pushes out the oldest (which then start again). */
export function createMemoryProposalLedger(options: MemoryProposalLedgerOptions = {}): MemoryProposalLedger {
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
