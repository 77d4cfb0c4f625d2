import type { LeafTest } from "../../src/evaluate/arg-match.js";
import { WorkBudgetExceededError, withWorkBudget } from "../../src/glob/index.js";

/** The fewest work units `test(value)` runs within (a budget opened afresh each try, as a decision opens one). */
export function unitsOf(test: LeafTest, value: string): number {
  const fits = (units: number): boolean => {
    try {
      withWorkBudget(units, () => test(value));
      return true;
    } catch (err) {
      if (err instanceof WorkBudgetExceededError) return false;
      throw err;
    }
  };
  let high = 1;
  while (!fits(high)) high *= 2;
  let low = high / 2;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fits(mid)) high = mid;
    else low = mid;
  }
  return high;
}
