/**
 * A deterministic bound on the work of one decision, counted in work units rather than time (core has no
 * clock of its own to read, and a decision must come out the same on a fast and a slow machine). One unit
 * is one step of the linear-time matcher (one live thread over one character), one character read by a
 * string test, or one argument value visited. {@link withWorkBudget} opens a budget around synchronous
 * work; {@link spendWork} draws on it and throws {@link WorkBudgetExceededError} once it is spent. Outside
 * a budget nothing is counted.
 */

/** Thrown when the work of one decision passes its budget; the decision is then refused. */
export class WorkBudgetExceededError extends Error {
  readonly code = "decision_budget_exceeded";
  constructor(readonly limit: number) {
    super(
      `the decision needed more than ${limit.toLocaleString("en-US")} work units (argument values and characters examined)`,
    );
  }
}

/** The open budget (units left, and its size), or none. Module state: work inside a budget is synchronous. */
const meter = { left: Infinity, limit: Infinity };

/** Counts the budgets opened: a decision's number, for what is remembered only within one decision. */
let epochs = 0;

/**
 * The number of the budget last opened ({@link withWorkBudget}): what one decision computed once and
 * charged for (a long argument's lower case, the literals a search found in it) is kept while this number
 * stays, and is computed and charged again after it changes.
 */
export function workEpoch(): number {
  return epochs;
}

/**
 * Whether a budget is open ({@link withWorkBudget}): outside one, what is spent can throw nothing, so work
 * whose answer was kept may be charged at once instead of step by step.
 */
export function isWorkBudgetOpen(): boolean {
  return meter.limit !== Infinity;
}

/** Draws `units` from the open budget; throws {@link WorkBudgetExceededError} when it is spent. */
export function spendWork(units: number): void {
  meter.left -= units;
  if (meter.left < 0) throw new WorkBudgetExceededError(meter.limit);
}

/**
 * Runs `work` (synchronous) with a budget of `units`; what it spends is also spent from an enclosing
 * budget. Throws {@link WorkBudgetExceededError} from inside `work` when the budget is spent.
 */
export function withWorkBudget<T>(units: number, work: () => T): T {
  const outerLeft = meter.left;
  const outerLimit = meter.limit;
  epochs++;
  meter.left = units;
  meter.limit = units;
  try {
    return work();
  } finally {
    meter.left = outerLeft - (units - meter.left);
    meter.limit = outerLimit;
  }
}

/**
 * Runs `work` (synchronous) and tells `spent` how many units it drew, whether it returned or threw (a spent
 * budget inside it throws after drawing past its size). It opens no budget of its own: what it counts is spent
 * from the enclosing budget, if any, which still bounds it, and a budget opened inside `work` bounds itself.
 */
export function measureWork<T>(work: () => T, spent: (units: number) => void): T {
  const outerLeft = meter.left;
  const start = Number.isFinite(outerLeft) ? outerLeft : Number.MAX_SAFE_INTEGER;
  meter.left = start;
  try {
    return work();
  } finally {
    const units = start - meter.left;
    meter.left = outerLeft - units;
    spent(units);
  }
}
