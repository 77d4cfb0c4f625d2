import type { Decision, SourceVerdict } from "./types.js";

/**
 * A refusal by the pipeline itself, not by a rule: `rule: null`, category `system`, risk `critical`, one
 * reason (`source: "pipeline"`, `code`, `message`) in its own verdict, after the `before` verdicts. `own`
 * sees that verdict before it is placed (to note on it, e.g. when waiting lifts the refusal). The one shape
 * of an invalid request, a failing pipeline, a spent caller share and a call over the proxy's cap.
 */
export function pipelineRefusal(
  code: string,
  message: string,
  before: readonly SourceVerdict[] = [],
  own: (verdict: SourceVerdict) => SourceVerdict = (verdict) => verdict,
): Decision {
  const verdict = own({ source: "pipeline", route: "refuse", reasons: [{ source: "pipeline", code, message }] });
  return {
    route: "refuse",
    action: "deny",
    rule: null,
    category: "system",
    risk_level: "critical",
    reasons: verdict.reasons,
    verdicts: [...before, verdict],
  };
}
