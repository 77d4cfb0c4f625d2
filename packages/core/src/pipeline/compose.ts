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
  let top = routeStrictness(deciding.route);
  let bottom = top;
  for (const verdict of verdicts) {
    const rank = routeStrictness(verdict.route);
    if (rank > top) {
      deciding = verdict;
      top = rank;
    }
    if (rank < bottom) bottom = rank;
  }
  // strictest first, source order within a rank (what a stable sort by rank gives), without sorting a copy
  const reasons: Reason[] = [];
  for (let rank = top; rank >= bottom; rank--) {
    for (const verdict of verdicts) {
      if (routeStrictness(verdict.route) !== rank) continue;
      // as flatMap would: an array is spread, anything else (a source's mistake) kept as it is
      const own: unknown = verdict.reasons;
      if (Array.isArray(own)) for (const reason of own as Reason[]) reasons.push(reason);
      else reasons.push(own as Reason);
    }
  }
  return { route: deciding.route, deciding, reasons };
}
