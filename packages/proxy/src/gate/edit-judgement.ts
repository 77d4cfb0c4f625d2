import type { Decision, Reason, RiskLevel } from "@acp/core";
import { describeRule } from "./tool-error.js";

/**
 * The questions a person has answered for one call: the rules that asked (`null`: the default action, no
 * rule) and the strongest level they were asked at. A person who approves with edits answered these,
 * not whatever rule the edited arguments fall under.
 */
export interface AnsweredQuestions {
  readonly rules: readonly (string | null)[];
  readonly level: RiskLevel;
}

/**
 * How arguments a person edited are judged again: the edit `stands` (the standing rules accept it, or ask
 * only what the person has answered); it is `refused` (a deny rule holds whatever the edit); or it must be
 * `asked` again — it falls under a rule the person was not asked about, or asks at a stronger level than
 * they answered — as a new question with `decision` (the edited arguments' decision, its reasons first
 * saying why it is asked again).
 */
export type EditJudgement =
  | { readonly kind: "stands" }
  | { readonly kind: "refused"; readonly decision: Decision }
  | {
      readonly kind: "asked";
      readonly decision: Decision;
      readonly answered: AnsweredQuestions;
      /** Why it is asked again: ``the edited arguments fall under policy rule `x`, which …``. */
      readonly why: string;
    };

/**
 * How many times one call's edited arguments may be put to a person again. Each new question covers at
 * least one rule the person had not answered, so edits that keep to answered rules never ask again; the
 * cap only ends an approver's edits that keep landing under new rules: the edit is then refused.
 */
export const MAX_EDIT_QUESTIONS = 3;

const LEVEL_RANK: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2, critical: 3 };

/** The level a decision asks at, as its consent request says it (`policy.required_level`). */
export function askedLevel(decision: Decision): RiskLevel {
  return decision.level ?? decision.risk_level;
}

/** What answering `decision`'s question covers. */
export function answeredBy(decision: Decision): AnsweredQuestions {
  return { rules: [decision.rule], level: askedLevel(decision) };
}

/**
 * Judges the decision of arguments a person edited against the questions they answered (`asked`: how many
 * questions this call has put to a person so far). The one rule of `acp proxy` and `acp serve` (its
 * waiting decisions and `POST /v1/consent/{id}/complete`): an edit is never forwarded under a rule that
 * nobody was asked about, and edits that stay under the answered rules are not asked again.
 */
export function judgeEdit(edited: Decision, answered: AnsweredQuestions, asked = 1): EditJudgement {
  if (edited.route === "refuse") return { kind: "refused", decision: edited };
  if (edited.route === "accept") return { kind: "stands" };
  const level = askedLevel(edited);
  const newRule = !answered.rules.includes(edited.rule);
  // a level that is not one of the four reads as the strongest asked and the weakest answered (fail closed)
  const stronger = (LEVEL_RANK[level] ?? LEVEL_RANK.critical) > (LEVEL_RANK[answered.level] ?? -1);
  if (!newRule && !stronger) return { kind: "stands" };
  const why = newRule
    ? `the edited arguments fall under ${describeRule(edited.rule)}, which the person who edited them was not asked about`
    : `the edited arguments ask at level ${level}, stronger than the ${answered.level} the person who edited them answered`;
  if (asked >= MAX_EDIT_QUESTIONS) {
    const reason: Reason = {
      source: "pipeline",
      code: "edit_asked_too_often",
      message: `approved with edits ${asked} times, and ${why}: refused rather than asked again`,
    };
    return {
      kind: "refused",
      decision: { ...edited, route: "refuse", action: "deny", reasons: [reason, ...edited.reasons] },
    };
  }
  const reason: Reason = {
    source: "pipeline",
    code: "edit_asked_again",
    message: `a person approved with edits; ${why}`,
  };
  return {
    kind: "asked",
    decision: { ...edited, reasons: [reason, ...edited.reasons] },
    answered: {
      rules: newRule ? [...answered.rules, edited.rule] : answered.rules,
      level: stronger ? level : answered.level,
    },
    why,
  };
}

/** Judges arguments a person edited (the whole edited argument object). Never rejects. */
export type JudgeEdited = (edited: Record<string, unknown>) => Promise<EditJudgement>;

/**
 * One call's judgement of the arguments a person edited, made once for both who need it: the broker, before
 * any channel is told how the request ended (`ConsentAsk.judgeEdited`: a channel must not say "approved" of
 * an edit the recheck refuses), and the caller after the broker's answer, which then takes the same
 * judgement rather than deciding a second time (the rules may have changed in between). Kept for the last
 * argument object judged (the broker hands back the object it judged); other arguments are judged afresh.
 */
export function judgeOnce(judge: JudgeEdited): JudgeEdited {
  let last: { readonly edited: Record<string, unknown>; readonly judgement: Promise<EditJudgement> } | undefined;
  return (edited) => {
    if (last?.edited === edited) return last.judgement;
    const judgement = judge(edited);
    last = { edited, judgement };
    return judgement;
  };
}
