import { WindowCounter } from "./rate-limiter.js";

/** Tuning of {@link AdmissionControl}; defaults follow §29. */
export interface AdmissionOptions {
  /** Base difficulty in bits (default 20). */
  readonly baseDifficulty?: number;
  /** Ceiling under abuse (default 28). */
  readonly maxDifficulty?: number;
  /** Creations per source per hour before difficulty starts rising (default 5). */
  readonly freeCreationsPerSource?: number;
  /** Creations across all sources per 10 minutes before the global surcharge applies (default 200). */
  readonly globalSurchargeAt?: number;
  /** Creations across all sources per minute that trip the circuit breaker (default 120). */
  readonly breakerAt?: number;
  /** How long the breaker stays open (default 5 min). */
  readonly breakerCooldownMs?: number;
}

const HOUR = 3_600_000;

/**
 * Adaptive proof-of-work (§11.2): difficulty per source rises with that source's creation velocity and
 * failure rate, plus a global surcharge under high total velocity; a circuit breaker stops admission
 * during abuse spikes. Sources are coarse address ranges. Behavioural throttling (rate limits) sits beside it.
 */
export class AdmissionControl {
  private readonly base: number;
  private readonly max: number;
  private readonly free: number;
  private readonly surchargeAt: number;
  private readonly breakerAt: number;
  private readonly cooldown: number;
  private readonly perSource = new WindowCounter(HOUR);
  private readonly failures = new WindowCounter(HOUR);
  private readonly abuse = new WindowCounter(HOUR);
  private readonly global10m = new WindowCounter(10 * 60_000);
  private readonly global1m = new WindowCounter(60_000);
  private breakerUntil = 0;

  /** See {@link AdmissionOptions}. */
  constructor(options: AdmissionOptions = {}) {
    this.base = options.baseDifficulty ?? 20;
    this.max = Math.max(this.base, options.maxDifficulty ?? 28);
    this.free = options.freeCreationsPerSource ?? 5;
    this.surchargeAt = options.globalSurchargeAt ?? 200;
    this.breakerAt = options.breakerAt ?? 120;
    this.cooldown = options.breakerCooldownMs ?? 5 * 60_000;
  }

  /** The ceiling of any difficulty (§29: 28 bits by default). */
  get maxDifficulty(): number {
    return this.max;
  }

  /** The difficulty a challenge for `source` gets now. */
  difficulty(source: string, nowMs: number): number {
    const created = this.perSource.peek(source, nowMs);
    const failed = this.failures.peek(source, nowMs);
    const abused = this.abuse.peek(source, nowMs);
    let d = this.base + Math.max(0, created - this.free) + Math.floor(failed / 10) + 2 * abused;
    if (this.global10m.peek("*", nowMs) >= this.surchargeAt) d += 2;
    return Math.min(this.max, d);
  }

  /** Whether the circuit breaker is open (admission paused). */
  breakerOpen(nowMs: number): boolean {
    return nowMs < this.breakerUntil;
  }

  /** How long the circuit breaker stays open from `nowMs` (0 when closed). */
  breakerRemainingMs(nowMs: number): number {
    return Math.max(0, this.breakerUntil - nowMs);
  }

  /** Records a successful creation from `source`. */
  recordCreation(source: string, nowMs: number): void {
    this.perSource.hit(source, nowMs);
    this.global10m.hit("*", nowMs);
    if (this.global1m.hit("*", nowMs) >= this.breakerAt) this.breakerUntil = nowMs + this.cooldown;
  }

  /** Records content refused by the scan from `source` (§23.2): +2 bits for that source for an hour. */
  recordContentAbuse(source: string, nowMs: number): void {
    this.abuse.hit(source, nowMs);
  }

  /** Records a failed admission or claim attempt from `source`. */
  recordFailure(source: string, nowMs: number): void {
    this.failures.hit(source, nowMs);
  }
}
