import type { ClassificationOverride } from "../policy/index.js";
import { classifyDerived, classifyGuarded } from "../classify/index.js";
import { formatIssue, type Issue } from "../issues/index.js";
import { isRoute } from "../route/index.js";
import { RISK_LEVELS, type ActionRequest } from "../request/index.js";
import { actionForRoute, composeVerdicts } from "./compose.js";
import { lookAlikeVerdict } from "./look-alike-name.js";
import type { DecisionSource } from "./sources.js";
import { pipelineRefusal } from "./system-refusal.js";
import type { Decision, SourceVerdict } from "./types.js";
import { validateActionRequest } from "./validate-request.js";

/** A configured pipeline: one `decide` for every front end. */
export interface Pipeline {
  /** Routes one (untrusted) request. Never throws: every error is a refuse with the error as reason. */
  decide(request: unknown, now: Date): Promise<Decision>;
}

/** Options of a pipeline beyond its sources. */
export interface PipelineOptions {
  /** The policy's `classify:` overrides, used when no policy verdict supplies the category. */
  readonly classify?: readonly ClassificationOverride[];
  /**
   * Who wrote a request's MCP `annotations`. `"server"` (the default): the upstream server, as `acp proxy`
   * serves them from its pinned tool definitions; they are a layer of the derived classification and may
   * classify a tool the built-in table does not know (`readOnlyHint` → read). `"caller"`: whoever sent the
   * request (`POST /v1/decide`), who may make a decision stricter, never looser, exactly like its own
   * `category`: see {@link annotationsAsClaim}.
   */
  readonly annotations?: "server" | "caller";
}

/**
 * A request whose annotations come from its caller, made into the caller's claim: without a `category` of
 * its own it claims the category the annotations give (and their risk, when higher than the risk without
 * them), and the annotations are dropped. The evaluator then judges it under the claimed and the derived
 * classification and the stricter wins, so `{"tool": "run_migration", "annotations": {"readOnlyHint":
 * true}}` is no longer read/low under an `allow` rule for reads, while `destructiveHint` on a `read_` tool
 * still tightens it.
 */
export function annotationsAsClaim(
  request: ActionRequest,
  overrides: readonly ClassificationOverride[] = [],
): ActionRequest {
  if (request.annotations === undefined) return request;
  const { annotations, ...rest } = request;
  void annotations; // dropped: the claim below says what they would
  if (rest.category !== undefined) return rest;
  const annotated = classifyDerived(request, overrides);
  const plain = classifyDerived(rest, overrides);
  const raises = RISK_LEVELS.indexOf(annotated.risk_level) > RISK_LEVELS.indexOf(plain.risk_level);
  return {
    ...rest,
    category: annotated.category,
    ...(rest.risk_level === undefined && raises ? { risk_level: annotated.risk_level } : {}),
  };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function refuseVerdict(source: DecisionSource["name"], code: string, message: string): SourceVerdict {
  return { source, route: "refuse", reasons: [{ source, code, message }] };
}

function sourceFailed(source: DecisionSource, err: unknown): SourceVerdict {
  return refuseVerdict(
    source.name,
    "source_error",
    `${source.name} failed, so the request is refused: ${errorMessage(err)}`,
  );
}

function isThenable(value: unknown): value is PromiseLike<SourceVerdict | null> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * What a source answered, checked: null (it does not judge), or a verdict whose route is one of the four.
 * Anything else — `undefined`, a route of another vocabulary (`"deny"`, `"allow"`), no object at all — is
 * the source's refuse verdict (`source_error`): an answer nobody understands never lets a call through,
 * and never drops out of the composition so that another source's accept decides.
 */
function checkVerdict(source: DecisionSource, answer: unknown): SourceVerdict | null {
  if (answer === null) return null;
  let route: unknown;
  try {
    route = typeof answer === "object" ? (answer as { route?: unknown }).route : undefined;
  } catch (err) {
    return sourceFailed(source, err); // `route` cannot even be read (a throwing getter)
  }
  if (isRoute(route)) return answer as SourceVerdict;
  const shown = typeof route === "string" ? `the route \`${route.slice(0, 64)}\`` : `no route (${typeof answer})`;
  return sourceFailed(source, new Error(`it answered ${shown} (expected accept, ask, defer or refuse)`));
}

/**
 * Asks one source: its verdict when it answers synchronously, a promise of it when it answers with one.
 * A throw or a rejection is the source's refuse verdict (`source_error`), never an allow; so is an answer
 * that is no verdict ({@link checkVerdict}).
 */
function askSource(
  source: DecisionSource,
  request: ActionRequest,
  now: Date,
  earlier?: readonly SourceVerdict[],
): SourceVerdict | null | Promise<SourceVerdict | null> {
  let answer: SourceVerdict | null | PromiseLike<SourceVerdict | null>;
  try {
    answer = source.evaluate(request, now, earlier);
    if (!isThenable(answer)) return checkVerdict(source, answer); // isThenable reads `then`, which may throw
  } catch (err) {
    return sourceFailed(source, err);
  }
  return Promise.resolve(answer).then(
    (verdict) => checkVerdict(source, verdict),
    (err: unknown) => sourceFailed(source, err),
  );
}

/** The reason code of a request refused as invalid: the issues' own when they all share one of these. */
function refusalCode(issues: readonly Issue[]): string {
  for (const code of ["request_too_large", "unsafe_integer"]) if (issues.every((i) => i.code === code)) return code;
  return "invalid_request";
}

function invalidDecision(message: string, verdicts: readonly SourceVerdict[], code = "invalid_request"): Decision {
  return pipelineRefusal(code, message, verdicts);
}

/** A failure inside the pipeline itself (a bug, or a verdict no code could read): refused, never thrown. */
function pipelineFailed(err: unknown): Decision {
  return invalidDecision(`the pipeline failed, so the request is refused: ${errorMessage(err)}`, [], "pipeline_error");
}

/**
 * Builds the one pipeline: validate → classify → evaluate every source → compose (strictest wins,
 * every reason kept). A pure function of (request, configuration, state behind the sources, clock).
 */
export function createPipeline(sources: readonly DecisionSource[], options: PipelineOptions = {}): Pipeline {
  const overrides = options.classify ?? [];
  const callerAnnotations = options.annotations === "caller";
  return {
    // not async: when every source answers synchronously, the decision is one resolved promise
    decide(input: unknown, now: Date): Promise<Decision> {
      try {
        return decideNow(input, now);
      } catch (err) {
        return Promise.resolve(pipelineFailed(err));
      }
    },
  };

  function decideNow(input: unknown, now: Date): Promise<Decision> {
    if (!(now instanceof Date) || Number.isNaN(now.getTime()))
      return Promise.resolve(invalidDecision("the clock gave an invalid time", []));
    let request: ActionRequest;
    try {
      const checked = validateActionRequest(input);
      if (!checked.ok) {
        const message = `invalid request: ${checked.issues.map((i) => formatIssue(i)).join("; ")}`;
        // a request refused only for its size, or only for numbers too large to carry exactly, says so in its
        // code (scripts tell it from a malformed one)
        return Promise.resolve(invalidDecision(message, [], refusalCode(checked.issues)));
      }
      request = callerAnnotations ? annotationsAsClaim(checked.value, overrides) : checked.value;
    } catch (err) {
      return Promise.resolve(invalidDecision(`invalid request: ${errorMessage(err)}`, []));
    }
    // sources marked `last` judge after the others and see their verdicts; every verdict keeps its
    // source's place in the list
    const bySource: (SourceVerdict | null)[] = new Array<SourceVerdict | null>(sources.length).fill(null);
    return judge(request, now, bySource, [], 0);
  }

  /**
   * Asks the sources from step `step` on (steps 0..n-1: the sources without `last` in order, then steps
   * n..2n-1: those with `last`), synchronously while they answer synchronously; from the first source that
   * answers with a promise on, one step per settled promise. One promise per decision when no source
   * awaits anything, instead of one per source.
   */
  function judge(
    request: ActionRequest,
    now: Date,
    bySource: (SourceVerdict | null)[],
    earlier: SourceVerdict[],
    step: number,
  ): Promise<Decision> {
    const n = sources.length;
    for (; step < 2 * n; step++) {
      const i = step < n ? step : step - n;
      const source = sources[i] as DecisionSource;
      const last = source.last === true;
      if (last !== step >= n) continue;
      const answer = last ? askSource(source, request, now, earlier) : askSource(source, request, now);
      if (answer instanceof Promise) {
        const next = step + 1;
        return answer
          .then((verdict) => {
            place(bySource, earlier, i, last, verdict);
            return judge(request, now, bySource, earlier, next);
          })
          .catch(pipelineFailed);
      }
      place(bySource, earlier, i, last, answer);
    }
    const verdicts = bySource.filter((v): v is SourceVerdict => v !== null);
    const disguised = lookAlikeVerdict(request);
    if (disguised !== null && verdicts.length > 0) verdicts.push(disguised);
    return Promise.resolve(composeDecision(request, verdicts, overrides));
  }
}

/** Keeps a source's verdict in its place; a verdict of a source without `last` is also handed to the later ones. */
function place(
  bySource: (SourceVerdict | null)[],
  earlier: SourceVerdict[],
  i: number,
  last: boolean,
  verdict: SourceVerdict | null,
): void {
  bySource[i] = verdict;
  if (!last && verdict !== null) earlier.push(verdict);
}

function composeDecision(
  request: ActionRequest,
  verdicts: readonly SourceVerdict[],
  overrides: readonly ClassificationOverride[],
): Decision {
  let classification: { category: Decision["category"]; risk_level: Decision["risk_level"] };
  try {
    // no policy verdict to choose between the request's own category and the derived one: the derived
    // category, and the higher risk (a caller may raise it, never lower it)
    classification = classifyGuarded(request, overrides);
  } catch (err) {
    return invalidDecision(`classification failed: ${errorMessage(err)}`, verdicts);
  }
  const composition = composeVerdicts(verdicts);
  const deciding = composition.deciding;
  const policyVerdict = verdicts.find((v) => v.source === "policy") as
    | (SourceVerdict & {
        category?: Decision["category"];
        risk_level?: Decision["risk_level"];
        timeout?: number;
        level?: Decision["risk_level"];
      })
    | undefined;
  const decision: Decision = {
    route: composition.route,
    action: actionForRoute(composition.route),
    rule: deciding?.rule === undefined ? null : `${deciding.source}:${deciding.rule}`,
    category: policyVerdict?.category ?? classification.category,
    risk_level: policyVerdict?.risk_level ?? classification.risk_level,
    reasons: composition.reasons,
    verdicts,
  };
  const waits = composition.route === "ask" || composition.route === "defer";
  if (waits && policyVerdict?.timeout !== undefined) Object.assign(decision, { timeout: policyVerdict.timeout });
  if (waits && policyVerdict?.level !== undefined) Object.assign(decision, { level: policyVerdict.level });
  return decision;
}
