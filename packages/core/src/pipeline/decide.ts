import type { ClassificationOverride } from "../policy/index.js";
import { classifyAction } from "../classify/index.js";
import { formatIssue } from "../issues/index.js";
import type { ActionRequest } from "../request/index.js";
import { actionForRoute, composeVerdicts } from "./compose.js";
import type { DecisionSource } from "./sources.js";
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
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function refuseVerdict(source: DecisionSource["name"], code: string, message: string): SourceVerdict {
  return { source, route: "refuse", reasons: [{ source, code, message }] };
}

async function runSource(
  source: DecisionSource,
  request: ActionRequest,
  now: Date,
  earlier?: readonly SourceVerdict[],
): Promise<SourceVerdict | null> {
  try {
    return await source.evaluate(request, now, earlier);
  } catch (err) {
    return refuseVerdict(
      source.name,
      "source_error",
      `${source.name} failed, so the request is refused: ${errorMessage(err)}`,
    );
  }
}

function invalidDecision(message: string, verdicts: readonly SourceVerdict[]): Decision {
  const verdict = refuseVerdict("pipeline", "invalid_request", message);
  return {
    route: "refuse",
    action: "deny",
    rule: null,
    category: "system",
    risk_level: "critical",
    reasons: verdict.reasons,
    verdicts: [...verdicts, verdict],
  };
}

/**
 * Builds the one pipeline: validate → classify → evaluate every source → compose (strictest wins,
 * every reason kept). A pure function of (request, configuration, state behind the sources, clock).
 */
export function createPipeline(sources: readonly DecisionSource[], options: PipelineOptions = {}): Pipeline {
  const overrides = options.classify ?? [];
  return {
    async decide(input: unknown, now: Date): Promise<Decision> {
      if (!(now instanceof Date) || Number.isNaN(now.getTime()))
        return invalidDecision("the clock gave an invalid time", []);
      let request: ActionRequest;
      try {
        const checked = validateActionRequest(input);
        if (!checked.ok)
          return invalidDecision(`invalid request: ${checked.issues.map((i) => formatIssue(i)).join("; ")}`, []);
        request = checked.value;
      } catch (err) {
        return invalidDecision(`invalid request: ${errorMessage(err)}`, []);
      }
      // sources marked `last` judge after the others and see their verdicts; every verdict keeps its
      // source's place in the list
      const bySource: (SourceVerdict | null)[] = new Array<SourceVerdict | null>(sources.length).fill(null);
      const earlier: SourceVerdict[] = [];
      for (const [i, source] of sources.entries()) {
        if (source.last === true) continue;
        const verdict = await runSource(source, request, now);
        bySource[i] = verdict;
        if (verdict !== null) earlier.push(verdict);
      }
      for (const [i, source] of sources.entries()) {
        if (source.last === true) bySource[i] = await runSource(source, request, now, earlier);
      }
      const verdicts = bySource.filter((v): v is SourceVerdict => v !== null);
      return composeDecision(request, verdicts, overrides);
    },
  };
}

function composeDecision(
  request: ActionRequest,
  verdicts: readonly SourceVerdict[],
  overrides: readonly ClassificationOverride[],
): Decision {
  let classification: { category: Decision["category"]; risk_level: Decision["risk_level"] };
  try {
    classification = classifyAction(request, overrides);
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
