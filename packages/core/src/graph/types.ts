/**
 * The parsed consent-graph model (see docs/reference/consent-graph.md).
 * Everything here is produced deeply frozen by `parseConsentGraph` / `validateConsentGraph`.
 */
import type { GraphMapping } from "./mapping.js";
import type { ProposalLedger } from "./proposal-ledger.js";
import type { AttestationLedger } from "./attestation-ledger.js";

/** Trust levels a domain may declare; informational (reported, never loosens a decision). */
export const TRUST_LEVELS = ["low", "medium", "high"] as const;
/** A domain's declared trust level. */
export type TrustLevel = (typeof TRUST_LEVELS)[number];

/** The three tiers, least strict first. */
export const GRAPH_TIERS = ["autonomous", "requires_approval", "blocked"] as const;
/** One of the three tiers of a domain. */
export type GraphTier = (typeof GRAPH_TIERS)[number];

/** The only decay action the document defines. */
export const DECAY_ACTIONS = ["downgrade_to_requires_approval"] as const;
/** What consent decay does to an autonomous tier that was not reviewed in time. */
export type DecayAction = (typeof DECAY_ACTIONS)[number];

/** One domain of the graph: its tiers and the optional modifiers. */
export interface GraphDomain {
  readonly trust_level?: TrustLevel;
  readonly autonomous: readonly string[];
  readonly requires_approval: readonly string[];
  readonly blocked: readonly string[];
  /** Actions that are only valid with a trusted-channel attestation (a modifier, not a tier). */
  readonly trusted_channel_required?: readonly string[];
  /** Hours from `proposed_at` before an approved proposal may take effect. */
  readonly cooling_period_hours?: number;
  /** Days a change must stay reversible; proposals without an `undo` are refused. */
  readonly undo_window_days?: number;
  /** Proposals must carry an explicit diff. */
  readonly require_diff?: boolean;
}

/** The top-level `consent_decay` object. */
export interface ConsentDecay {
  readonly enabled: boolean;
  readonly review_interval_days: number;
  readonly decay_action: DecayAction;
}

/** A parsed consent graph: the domains beside `vip_contacts` and `consent_decay`. */
export interface ConsentGraph {
  /** Domain name → domain (a null-prototype object; look names up with `Object.hasOwn`). */
  readonly domains: Readonly<Record<string, GraphDomain>>;
  /** Contact name → phone number or address. */
  readonly vip_contacts: Readonly<Record<string, string>>;
  readonly consent_decay?: ConsentDecay;
}

/** The four outcomes of a graph check, least strict first. */
export const GRAPH_OUTCOMES = ["AUTONOMOUS", "VISIBLE", "FORCED", "BLOCKED"] as const;
/** AUTONOMOUS: execute and log; VISIBLE: proceed and notify; FORCED: ask first; BLOCKED: refuse and alert. */
export type GraphOutcomeKind = (typeof GRAPH_OUTCOMES)[number];

/** One reason behind a graph outcome. */
export interface GraphReason {
  /** Stable snake_case code (listed in docs/reference/errors.md, "Consent graph"). */
  readonly code: string;
  /** A sentence a person understands. */
  readonly message: string;
}

/** The answer of `checkConsentGraph`. */
export interface GraphOutcome {
  readonly outcome: GraphOutcomeKind;
  /** The tier the graph file declares for the action; null when the action is unclassified. */
  readonly tier: GraphTier | null;
  /** The tier that applied after consent decay (equals `tier` unless decayed). */
  readonly effective_tier: GraphTier | null;
  readonly domain: string;
  readonly action: string;
  /** Every reason, the deciding one first. */
  readonly reasons: readonly GraphReason[];
  /** For FORCED because of a cooling period: the ISO-8601 time the proposal becomes eligible. */
  readonly deferred_until?: string;
  /** The domain's declared trust level, when it has one. */
  readonly trust_level?: TrustLevel;
}

/** One recorded review of one domain. */
export interface GraphDomainReview {
  /** ISO-8601 time of the review. */
  readonly reviewed_at: string;
  /** `sha256:` + hex of the canonical JSON of the domain as reviewed. */
  readonly domain_hash: string;
  /** `sha256:` + hex of the canonical JSON of the whole graph as reviewed. */
  readonly graph_hash: string;
  /**
   * `sha256:` + hex of the VIP contacts' normalised values as reviewed (`hashVipContacts`). Absent in a review
   * recorded before ACP recorded it: such a review counts for nothing (review again).
   */
  readonly vip_contacts_hash?: string;
  /**
   * `consent_decay.review_interval_days` when the review was made (absent: the graph had no `consent_decay`).
   * Under another interval the review counts for nothing: a review made for 30 days is not stretched to 90.
   */
  readonly review_interval_days?: number;
  /**
   * `sha256:` + hex of the graph mapping in use when the review was made (`hashGraphMapping`; no mapping is
   * the hash of `[]`). Absent in a review recorded before ACP recorded it: such a review counts for nothing.
   */
  readonly mapping_hash?: string;
}

/** The review record (`$ACP_HOME/consent-graph.reviews.json`): last review per domain. */
export interface GraphReviewRecord {
  readonly version: 1;
  readonly domains: Readonly<Record<string, GraphDomainReview>>;
}

/** What a graph check needs besides the graph and the target: clock, threshold, state, keys. */
export interface GraphContext {
  /** The clock: the time of the decision. */
  readonly now: Date;
  /** VISIBLE from this confidence up (inclusive); default 0.85. */
  readonly threshold?: number;
  /** Last review per domain; absent means never reviewed. */
  readonly reviews?: GraphReviewRecord;
  /** Trusted-channel keys: key id → shared secret (UTF-8). */
  readonly trustedChannelKeys?: Readonly<Record<string, string>>;
  /**
   * When ACP first saw each proposal: a cooling period counts from there, and a `proposed_at` more than the
   * clock skew away from it is refused. Absent: ACP has seen the proposal only now (a one-off check).
   */
  readonly proposals?: ProposalLedger;
  /**
   * The trusted-channel attestations already used (an `AttestationLedger`, `createMemoryAttestationLedger`):
   * each verified attestation is taken once, and the same one again inside its window is BLOCKED
   * (`attestation_replayed`). Absent: not tracked (a one-off check, such as `acp graph check`). A ledger
   * that answers asynchronously refuses here; the pipeline's graph source waits for it.
   */
  readonly attestations?: AttestationLedger;
  /**
   * The graph mapping in use (config.yml `graph.mapping`), which a review is bound to: a review made under
   * another mapping counts as not reviewed. Absent: no mapping. The pipeline's graph source takes its own
   * mapping when this is absent.
   */
  readonly reviewedMapping?: GraphMapping;
  /** Allowed clock skew in seconds for attestation timestamps and `proposed_at`; default 300. */
  readonly clockSkewSeconds?: number;
  /**
   * The graph's file as the person named it (`--graph FILE`, a test file's `graph:`), when it is not the home's
   * `consent-graph.json`: the re-approve hint of a decayed domain then names it (`acp graph review D --graph FILE`).
   */
  readonly graphFile?: string;
}

/** The tool call a graph target came from, bound into trusted-channel attestations. */
export interface GraphCall {
  readonly tool: string;
  readonly server?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}
