/**
 * Persistent per-source reputation (§11.2 "PoW MUST NOT be the only long-term admission control", §23.1 "botnets
 * will be used"). Sources are address ranges (`range:…`, the /24 or /48 the provider already logs) and issuer
 * subjects (`subject:{kid}:{sub}`, from admission tokens). Bad events add points; the score is kept in the claim
 * store (so it survives restarts and is shared by every node) and halves every `halfLifeHours`. A score at or above
 * `raiseAt` adds proof-of-work bits (one more each time it doubles); at or above `refuseAt` the source is refused
 * admission until it has decayed below. Scores move only on what a source itself did (or what was done with its
 * sandboxes), and are read only for the caller's own source, so they reveal nothing about anyone else's sandboxes.
 */

/** The events that cost a source reputation. */
export type ReputationEvent = "content_flagged" | "lockout" | "abandoned";

/** Tuning of {@link ReputationPolicy}. */
export interface ReputationOptions {
  /** Hours for a score to halve (default 72). */
  readonly halfLifeHours?: number;
  /** Score from which difficulty rises (default 10): +1 bit, and +1 more each time the score doubles. */
  readonly raiseAt?: number;
  /** Score from which admission is refused until it decays below (default 160). */
  readonly refuseAt?: number;
  /** Points per event (defaults: content_flagged 30, lockout 15, abandoned 1). */
  readonly points?: Partial<Record<ReputationEvent, number>>;
}

const HOUR = 3_600_000;

/** The reputation key of an address range. */
export const rangeKey = (source: string): string => `range:${source}`;
/** The reputation key of an issuer subject. */
export const subjectKey = (kid: string, sub: string): string => `subject:${kid}:${sub}`;

/** The decision rules over stored scores (pure: the clock is passed in). */
export class ReputationPolicy {
  readonly halfLifeMs: number;
  readonly raiseAt: number;
  readonly refuseAt: number;
  private readonly points: Record<ReputationEvent, number>;

  /** See {@link ReputationOptions}. */
  constructor(o: ReputationOptions = {}) {
    this.halfLifeMs = (o.halfLifeHours ?? 72) * HOUR;
    this.raiseAt = o.raiseAt ?? 10;
    this.refuseAt = Math.max(this.raiseAt, o.refuseAt ?? 160);
    this.points = { content_flagged: 30, lockout: 15, abandoned: 1, ...o.points };
  }

  /** Points an event costs. */
  pointsFor(event: ReputationEvent): number {
    return this.points[event];
  }

  /** Extra proof-of-work bits for a (decayed) score. */
  extraBits(score: number): number {
    return score < this.raiseAt ? 0 : 1 + Math.floor(Math.log2(score / this.raiseAt));
  }

  /** How long (ms) a source with this (decayed) score stays refused; 0 when it is admitted. */
  refusedForMs(score: number): number {
    return score < this.refuseAt ? 0 : Math.ceil(this.halfLifeMs * Math.log2(score / this.refuseAt)) + 1;
  }
}

/** A stored score decayed from `updatedAt` to `now` with half-life `halfLifeMs`. */
export function decayScore(score: number, updatedAt: number, now: number, halfLifeMs: number): number {
  return score * 0.5 ** (Math.max(0, now - updatedAt) / halfLifeMs);
}
