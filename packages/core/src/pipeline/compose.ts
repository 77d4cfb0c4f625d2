import { routeStrictness, type Route } from "../route/index.js";
import type { Reason, SourceVerdict } from "./types.js";

/** The policy-rule word for a route: accept→allow, ask/defer→ask, refuse→deny. */
export function actionForRoute(route: Route): "allow" | "ask" | "deny" {
  if (route === "accept") return "allow";
  if (route === "refuse") return "deny";
  return "ask";
}

/** The result of composing every source's verdict. */
export interface Composition {
  readonly route: Route;
  /** The verdict that decided (the first of the strictest), or null when no source spoke. */
  readonly deciding: SourceVerdict | null;
  /** Every reason, strictest verdict first, in source order within a route. */
  readonly reasons: readonly Reason[];
}

/**
 * Composes verdicts: the strictest route wins (`accept < ask < defer < refuse`) and every reason is
 * kept. When no source spoke, the request is refused: nothing judged it, so nothing allows it.
 */
export function composeVerdicts(verdicts: readonly SourceVerdict[]): Composition {
  if (verdicts.length === 0) {
    return {
      route: "refuse",
      deciding: null,
      reasons: [
        {
          source: "pipeline",
          code: "no_source",
          message: "no configured source judged this request (no policy, graph or contract), so it is refused",
        },
      ],
    };
  }
  let deciding = verdicts[0] as SourceVerdict;
  for (const verdict of verdicts) {
    if (routeStrictness(verdict.route) > routeStrictness(deciding.route)) deciding = verdict;
  }
  const ordered = [...verdicts].sort((a, b) => routeStrictness(b.route) - routeStrictness(a.route));
  return { route: deciding.route, deciding, reasons: ordered.flatMap((v) => v.reasons) };
}
