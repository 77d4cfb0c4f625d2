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

/** The strictness rank of a route: accept 0, ask 1, defer 2, refuse 3. */
export function routeStrictness(route: Route): number {
  return ROUTES.indexOf(route);
}

/** The stricter of two routes. */
export function strictestRoute(a: Route, b: Route): Route {
  return routeStrictness(a) >= routeStrictness(b) ? a : b;
}
