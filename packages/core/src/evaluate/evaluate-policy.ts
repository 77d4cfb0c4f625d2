import type { Reason, SourceVerdict } from "../pipeline/types.js";
import type { PolicyAction, PolicyRule } from "../policy/types.js";
import { isWellFormedString } from "../audit/audit-json.js";
import { REQUEST_LIMITS } from "../pipeline/validate-request.js";
import { findUnreadableName, type ActionRequest, type Category, type RiskLevel } from "../request/index.js";
import type { Route } from "../route/index.js";
import { classifyGuardedWithCompiled } from "../classify/classify-action.js";
import type { CompiledPolicy } from "./compile-policy.js";
import { measureWork, WorkBudgetExceededError } from "../glob/index.js";
import { matchPolicy, type PolicyMatch } from "./match-policy.js";
import { tallyPolicyWork } from "./policy-work.js";
import { noteRetryAt, secondsUntil } from "./retry-after.js";
import type { RateLimiter } from "./rate-limiter.js";

/** The policy source's verdict: the route plus the rule vocabulary and classification. */
export interface PolicyVerdict extends SourceVerdict {
  readonly source: "policy";
  /** allow/ask/deny as decided here (a spent rate limit or an error gives `deny`). */
  readonly action: PolicyAction;
  readonly category: Category;
  readonly risk_level: RiskLevel;
  /** The matched rule's id, `"default"` when no rule matched, `"(error)"` when evaluation failed first. */
  readonly rule: string;
  /** For ask: the level the rule asks for. */
  readonly level?: RiskLevel;
  /** For ask: seconds before the request auto-denies. */
  readonly timeout?: number;
}

/** Options of {@link evaluatePolicy}. */
export interface EvaluatePolicyOptions {
  /** The clock for time windows and rate limits. */
  readonly now: Date;
  /** Required when the matched rule has a `rate_limit`; without it such a rule refuses. */
  readonly rateLimiter?: RateLimiter;
  /**
   * False: do not spend (or check) the matched rule's rate limit — the caller knows the call is refused
   * anyway (another source refuses it). Default true.
   */
  readonly spendRateLimit?: boolean;
}

/** Policy action → route: allow→accept, ask→ask, deny→refuse. */
export const POLICY_ACTION_ROUTES: Readonly<Record<PolicyAction, Route>> = {
  allow: "accept",
  ask: "ask",
  deny: "refuse",
};

/** The limiter key of a rule: rate limits are per rule, shared by every agent and server. */
export function rateLimitKey(ruleId: string): string {
  return `policy:${ruleId}`;
}

function verdictFrom(match: PolicyMatch, action: PolicyAction, extra: readonly Reason[]): PolicyVerdict {
  const rule = match.rule;
  return {
    source: "policy",
    route: POLICY_ACTION_ROUTES[action],
    action,
    category: match.category,
    risk_level: match.risk_level,
    rule: match.ruleId,
    reasons: [...match.reasons, ...extra],
    ...(action === "ask" && rule?.level !== undefined ? { level: rule.level } : {}),
    ...(action === "ask" && rule?.timeout !== undefined ? { timeout: rule.timeout } : {}),
  };
}

/** Why a rule's rate limit refuses the call, and when a slot frees (spent limits only). */
interface Limited {
  readonly reason: Reason;
  readonly retryAtMs?: number;
}

async function checkRateLimit(rule: PolicyRule, options: EvaluatePolicyOptions): Promise<Limited | undefined> {
  const limit = rule.rate_limit;
  if (limit === undefined || rule.action === "deny" || options.spendRateLimit === false) return undefined;
  if (options.rateLimiter === undefined) {
    const message = `rule \`${rule.id}\` has rate limit \`${limit.text}\` but no rate limiter is configured`;
    return { reason: { source: "policy", code: "rate_limit_unavailable", message, rule: rule.id } };
  }
  const nowMs = options.now.getTime();
  const outcome = await options.rateLimiter.consume(rateLimitKey(rule.id), limit.count, limit.windowMs, nowMs);
  if (outcome.allowed === true) return undefined;
  // when the window frees a slot, as the answer's `Retry-After` says it (another caller of the rule may take it first)
  const when = Number.isFinite(outcome.resetAtMs) ? `; try again in ${secondsUntil(outcome.resetAtMs, nowMs)} s` : "";
  const message = `rule \`${rule.id}\` is rate limited: limit \`${limit.text}\` spent${when}`;
  return { reason: { source: "policy", code: "rate_limited", message, rule: rule.id }, retryAtMs: outcome.resetAtMs };
}

/** The refusal of a limited call; a spent limit keeps when it frees a slot ({@link noteRetryAt}). */
function limitedVerdict(match: PolicyMatch, limited: Limited): PolicyVerdict {
  const verdict = verdictFrom(match, "deny", [limited.reason]);
  return limited.retryAtMs === undefined ? verdict : noteRetryAt(verdict, limited.retryAtMs);
}

/**
 * A tool or server name the pipeline refuses (`validateActionRequest`) is refused here too, for a caller
 * that evaluates without the pipeline: a name holding a character nobody sees (`delete\u200b_database`) was
 * no rule's for the name it shows, so a deny rule missed it and the rules after it, or the default, decided.
 */
function assertName(value: unknown, key: "tool" | "server"): void {
  if (typeof value !== "string") throw new TypeError(`invalid request: \`${key}\` must be a string`);
  if (value.length === 0) throw new TypeError(`invalid request: \`${key}\` must be a non-empty string`);
  if (value.length > REQUEST_LIMITS.maxNameLength) {
    throw new RangeError(`invalid request: \`${key}\` is longer than ${REQUEST_LIMITS.maxNameLength} characters`);
  }
  if (!isWellFormedString(value)) throw new TypeError(`invalid request: \`${key}\` holds a lone surrogate`);
  const unreadable = findUnreadableName(value);
  if (unreadable !== undefined) throw new TypeError(`invalid request: \`${key}\` holds ${unreadable}`);
}

/** The request's names checked as the pipeline checks them ({@link assertName}). */
function assertNames(request: ActionRequest): void {
  if (typeof request !== "object" || request === null) return; // matchPolicy says what is wrong
  assertName(request.tool, "tool");
  if (request.server !== undefined) assertName(request.server, "server");
}

/** What a reason says of an error: its message, or a fixed text when reading or writing it throws too. */
function describeError(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    // a value thrown by a getter of a request built in code, or by a rate limiter (`Object.create(null)`, a
    // Proxy): the refusal stands without its words, rather than this function rejecting
    return "an error that cannot be shown";
  }
}

/** Whether `err` is the work budget's own error (false for a value `instanceof` cannot even be asked of). */
function isBudgetError(err: unknown): boolean {
  try {
    return err instanceof WorkBudgetExceededError;
  } catch {
    return false;
  }
}

function errorVerdict(compiled: CompiledPolicy, request: ActionRequest, err: unknown): PolicyVerdict {
  const detail = describeError(err);
  let category: Category = "system";
  let risk: RiskLevel = "critical";
  try {
    const c = classifyGuardedWithCompiled(request, compiled.overrides);
    category = c.category;
    risk = c.risk_level;
  } catch {
    // The request could not even be classified: keep the most conservative classification.
  }
  const reason: Reason = isBudgetError(err)
    ? { source: "policy", code: "decision_budget_exceeded", message: `the request is too costly to judge: ${detail}` }
    : { source: "policy", code: "evaluation_error", message: `policy evaluation failed: ${detail}` };
  return {
    source: "policy",
    route: "refuse",
    action: "deny",
    category,
    risk_level: risk,
    rule: "(error)",
    reasons: [reason],
  };
}

/**
 * Evaluates the policy for a request: {@link matchPolicy}, then — only for the matched rule, and only for
 * allow and ask rules — its rate limit, keyed by rule id ({@link rateLimitKey}). A spent limit refuses
 * with reason `rate_limited`. When the request's own category made the decision stricter
 * ({@link PolicyMatch.derivedRule}), the rate limit of the rule its derived classification matched is checked
 * first, so a caller's category never escapes a limit. Any error (malformed request, invalid clock, a failing limiter) gives a
 * refuse verdict with reason `evaluation_error`; this function never rejects. A request is malformed here when the
 * pipeline's own check would refuse it for its names (empty, over 256 characters, a lone surrogate, a character
 * nobody sees) or for an argument value a rule reads (not one JSON can hold: {@link matchPolicy}), so a caller
 * without the pipeline in front gets no looser answer.
 */
export async function evaluatePolicy(
  compiled: CompiledPolicy,
  request: ActionRequest,
  options: EvaluatePolicyOptions,
): Promise<PolicyVerdict> {
  // the work of the match, kept beside the verdict for a front end that shares it out among callers
  let units = 0;
  const count = (spent: number): void => {
    units = spent;
  };
  try {
    assertNames(request);
    const match = measureWork(() => matchPolicy(compiled, request, options.now), count);
    const tally = (verdict: PolicyVerdict): PolicyVerdict => tallyPolicyWork(verdict, { units, exhausted: false });
    if (match.derivedRule !== undefined && match.action !== "deny") {
      // the request's own category made the decision stricter: the limit the call meets without it still holds
      const limited = await checkRateLimit(match.derivedRule, options);
      if (limited !== undefined) return tally(limitedVerdict(match, limited));
    }
    if (match.rule === null) return tally(verdictFrom(match, match.action, []));
    const limited = await checkRateLimit(match.rule, options);
    if (limited !== undefined) return tally(limitedVerdict(match, limited));
    return tally(verdictFrom(match, match.action, []));
  } catch (err) {
    return tallyPolicyWork(errorVerdict(compiled, request, err), { units, exhausted: isBudgetError(err) });
  }
}
