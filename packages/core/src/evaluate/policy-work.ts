/**
 * What one policy evaluation spent, in work units ({@link DECISION_WORK_BUDGET}), kept beside its verdict
 * rather than in it: a front end that serves several callers on one thread (`acp serve`) charges each caller
 * for its decisions, and the verdict's wire form stays as it was.
 */
import type { SourceVerdict } from "../pipeline/types.js";

/**
 * The work of each policy verdict {@link evaluatePolicy} made, by the verdict object itself; and the work
 * of every decision judged to make one answer ({@link keepPolicyWork}), by that answer's `verdicts` array
 * (which a copy of the decision keeps).
 */
const spentBy = new WeakMap<object, PolicyWork>();

/** The work of one policy evaluation. */
export interface PolicyWork {
  /** Work units the evaluation drew (argument values visited, characters read, matcher steps). */
  readonly units: number;
  /** True when it drew past the budget and was refused (`decision_budget_exceeded`). */
  readonly exhausted: boolean;
}

/** Keeps `work` for `verdict` (the evaluator's own call, once per verdict it makes). */
export function tallyPolicyWork<T extends SourceVerdict>(verdict: T, work: PolicyWork): T {
  spentBy.set(verdict, work);
  return verdict;
}

/**
 * The work of the policy evaluation behind a decision: the one policy verdict among `verdicts` that
 * {@link evaluatePolicy} made (a decision's verdicts are the sources' own objects, kept through copies of the
 * decision), or undefined when no policy judged (a request refused before the sources, a pipeline without a
 * policy) or the verdict came from elsewhere.
 */
export function policyWorkOf(decision: { readonly verdicts: readonly SourceVerdict[] }): PolicyWork | undefined {
  const kept = spentBy.get(decision.verdicts);
  if (kept !== undefined) return kept;
  for (const verdict of decision.verdicts) {
    const work = spentBy.get(verdict);
    if (work !== undefined) return work;
  }
  return undefined;
}

/**
 * `answer` (returned as it is) now stands for the work of every decision in `judged` together, for a front
 * end that judges one request several times and answers with one of them (`acp serve` judging a caller's
 * `server` under each of its readings): units summed, exhausted when any was. Decisions in `judged` without
 * policy work add nothing; none at all leaves `answer` as it was.
 */
export function keepPolicyWork<T extends { readonly verdicts: readonly SourceVerdict[] }>(
  answer: T,
  judged: readonly { readonly verdicts: readonly SourceVerdict[] }[],
): T {
  let units = 0;
  let exhausted = false;
  let any = false;
  for (const decision of judged) {
    const work = policyWorkOf(decision);
    if (work === undefined) continue;
    any = true;
    units += work.units;
    exhausted ||= work.exhausted;
  }
  if (any) spentBy.set(answer.verdicts, { units, exhausted });
  return answer;
}
