/**
 * Each caller's share of the policy work of one process. One decision may spend up to `DECISION_WORK_BUDGET`
 * work units (2^23, one to three seconds of one core) before it is refused, and one thread decides for every
 * caller of an `acp serve` node or an `acp proxy --http`: a caller sending such requests back to back would
 * hold the thread, and every other caller would wait. So each caller has an allowance of work units: what its
 * decisions spend is drawn from it and comes back at a steady rate (a token bucket), and a caller that has
 * overdrawn it is refused at once, without being judged (`caller_budget_exhausted`), until it has come back
 * above zero. A decision refused for exhausting its own budget is charged {@link EXHAUSTED_CHARGE}: no
 * request a person meant costs that much, and a request built to cost it is what this share is for.
 *
 * The caller is who the front end knows it to be: the agent its token names (`serve.agent_tokens`,
 * `proxy.agent_tokens`). Callers whose token names no agent share one allowance: the `agent` they send is
 * their own word, and naming another agent must not spend its share. Pure: the clock is passed in.
 */
import { pipelineRefusal } from "../pipeline/system-refusal.js";
import type { Decision } from "../pipeline/types.js";
import { DECISION_WORK_BUDGET } from "./match-policy.js";
import { policyWorkOf } from "./policy-work.js";
import { noteRetryAt } from "./retry-after.js";

/** Units of work one caller may spend at once, by default: 2^25, four whole decision budgets. */
export const DEFAULT_CALLER_BUDGET_UNITS = 2 ** 25;

/** Over how long spent units come back, by default: 60 s (the whole allowance a minute). */
export const DEFAULT_CALLER_BUDGET_WINDOW_MS = 60_000;

/** Callers counted at once, by default; refilled callers are forgotten first. */
export const DEFAULT_CALLER_BUDGET_MAX_CALLERS = 10_000;

/** What a decision refused for exhausting `DECISION_WORK_BUDGET` is charged: twice that budget. */
export const EXHAUSTED_CHARGE = 2 * DECISION_WORK_BUDGET;

/** How each caller's share is set (`serve.caller_budget`, `proxy.caller_budget`). */
export interface CallerBudgetOptions {
  /** Work units one caller may spend at once. Default {@link DEFAULT_CALLER_BUDGET_UNITS}. */
  readonly units?: number;
  /** Spent units come back at `units` per this many ms. Default {@link DEFAULT_CALLER_BUDGET_WINDOW_MS}. */
  readonly windowMs?: number;
  /** Most callers counted at once. Default {@link DEFAULT_CALLER_BUDGET_MAX_CALLERS}. */
  readonly maxCallers?: number;
}

/** Each caller's allowance, kept in memory (per process: each node of a cluster counts its own callers). */
export interface CallerBudget {
  /**
   * Null when `caller` may be judged now; else the refusal to give instead (the caller has overdrawn its
   * allowance, or too many callers are counted to count a new one), which names when to try again.
   */
  admit(caller: string | undefined, nowMs: number): Decision | null;
  /** Draws what the policy evaluation behind `decision` spent from `caller`'s allowance. */
  charge(caller: string | undefined, decision: Decision, nowMs: number): void;
  /** How many callers are counted now (for tests). */
  size(): number;
}

/** A caller's allowance as last counted: `balance` units at `atMs` (below zero: overdrawn). */
interface Account {
  balance: number;
  atMs: number;
}

/** The key of the callers whose token names no agent (no agent's name is empty). */
const UNSCOPED = "";

function who(caller: string | undefined): string {
  if (caller === undefined || caller === UNSCOPED) {
    return "the callers whose token names no agent (they share one allowance)";
  }
  return `agent \`${caller.length > 64 ? `${caller.slice(0, 64)}…` : caller}\``;
}

/** The refusal of a caller not judged now; `retryAtMs`: when it may be judged again. */
function refusal(message: string, retryAtMs: number): Decision {
  return pipelineRefusal("caller_budget_exhausted", message, [], (verdict) => noteRetryAt(verdict, retryAtMs));
}

/** Whole seconds, rounded up, at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Creates the allowances; throws a RangeError for a size that is not a positive whole number. */
export function createCallerBudget(options: CallerBudgetOptions = {}): CallerBudget {
  const units = options.units ?? DEFAULT_CALLER_BUDGET_UNITS;
  const windowMs = options.windowMs ?? DEFAULT_CALLER_BUDGET_WINDOW_MS;
  const maxCallers = options.maxCallers ?? DEFAULT_CALLER_BUDGET_MAX_CALLERS;
  for (const [name, value] of [
    ["units", units],
    ["windowMs", windowMs],
    ["maxCallers", maxCallers],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`caller budget: \`${name}\` must be a positive whole number, not ${String(value)}`);
    }
  }
  const accounts = new Map<string, Account>();
  const share = `${units.toLocaleString("en-US")} work units per ${seconds(windowMs)} s`;

  /** The balance at `nowMs`: what came back since it was counted, up to the whole allowance. */
  function balanceAt(account: Account, nowMs: number): number {
    const elapsed = nowMs - account.atMs;
    // a clock that went back (or is no number) gives nothing back
    if (!(elapsed > 0)) return account.balance;
    return Math.min(units, account.balance + (elapsed * units) / windowMs);
  }

  /** Forgets the callers whose allowance has come back whole (counting them again starts from whole). */
  function prune(nowMs: number): void {
    for (const [key, account] of accounts) if (balanceAt(account, nowMs) >= units) accounts.delete(key);
  }

  return {
    admit(caller, nowMs) {
      const key = caller ?? UNSCOPED;
      const account = accounts.get(key);
      if (account === undefined) {
        if (accounts.size < maxCallers) return null;
        prune(nowMs);
        if (accounts.size < maxCallers) return null;
        // fail closed: counting a new caller would forget another's debt
        return refusal(
          `too many callers are being counted (at most ${maxCallers.toLocaleString("en-US")}) for ${who(caller)} ` +
            `to be counted too: refused without being judged; try again in ${seconds(windowMs)} s`,
          nowMs + seconds(windowMs) * 1000,
        );
      }
      const balance = balanceAt(account, nowMs);
      if (balance > 0) return null;
      // the balance is above zero again after -balance / (units / windowMs) ms
      const retryMs = Math.floor((-balance * windowMs) / units) + 1;
      return refusal(
        `${who(caller)} has spent its share of this process's policy work (${share}; a request too costly to ` +
          `judge counts as ${EXHAUSTED_CHARGE.toLocaleString("en-US")}): refused without being judged, so the ` +
          `other callers are answered; try again in ${seconds(retryMs)} s`,
        nowMs + seconds(retryMs) * 1000,
      );
    },
    charge(caller, decision, nowMs) {
      const work = policyWorkOf(decision);
      if (work === undefined) return;
      const cost = work.exhausted ? Math.max(work.units, EXHAUSTED_CHARGE) : work.units;
      if (cost <= 0) return;
      const key = caller ?? UNSCOPED;
      const account = accounts.get(key);
      if (account === undefined) {
        // a new caller's first charge (admitted while there was room; a burst may pass the bound by the
        // decisions in flight)
        accounts.set(key, { balance: units - cost, atMs: nowMs });
        return;
      }
      account.balance = balanceAt(account, nowMs) - cost;
      if (Number.isFinite(nowMs) && nowMs > account.atMs) account.atMs = nowMs;
    },
    size: () => accounts.size,
  };
}

/**
 * `decide()` within `caller`'s allowance: its refusal, with nothing judged, when the caller has overdrawn it;
 * else the decision, whose policy work is then charged. Without a budget (null), just `decide()`.
 */
export function decideWithin(
  budget: CallerBudget | null,
  caller: string | undefined,
  clock: () => Date,
  decide: () => Promise<Decision>,
): Promise<Decision> {
  if (budget === null) return decide();
  const refused = budget.admit(caller, clock().getTime());
  if (refused !== null) return Promise.resolve(refused);
  return decide().then((decision) => {
    budget.charge(caller, decision, clock().getTime());
    return decision;
  });
}
