/**
 * Routes are the four outcomes of a decision, ordered by strictness:
 * `accept < ask < defer < refuse`. The strictest route of every source wins.
 */
export const ROUTES = ["accept", "ask", "defer", "refuse"] as const;

/** One of the four decision routes. */
export type Route = (typeof ROUTES)[number];

/** Whether a value is one of the four known routes (unknown values fail closed elsewhere). */
export function isRoute(value: unknown): value is Route {
  return typeof value === "string" && (ROUTES as readonly string[]).includes(value);
}

/**
 * The strictness rank of a route: accept 0, ask 1, defer 2, refuse 3; a value that is no route (a source's
 * mistake, `deny` of the policy's vocabulary) 4, above refuse, so it never ranks as the looser of two.
 */
export function routeStrictness(route: Route): number {
  const rank = ROUTES.indexOf(route);
  return rank < 0 ? ROUTES.length : rank;
}

/** The stricter of two routes; `refuse` when either is no route at all (fail closed). */
export function strictestRoute(a: Route, b: Route): Route {
  if (!isRoute(a) || !isRoute(b)) return "refuse";
  return routeStrictness(a) >= routeStrictness(b) ? a : b;
}
