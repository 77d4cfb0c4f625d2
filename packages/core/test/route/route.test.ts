/**
 * Routes are ordered `accept < ask < defer < refuse`, and the strictest wins. A value that is no route (a
 * source's mistake, a route of another vocabulary such as `deny`, or one read from outside past a check
 * that missed it) ranked below `accept` (its index was -1), so the stricter of it and `ask` was `ask`, and of
 * it and `accept` was `accept`: an unknown route never decides a call through.
 */
import { describe, expect, it } from "vitest";
import { ROUTES, isRoute, routeStrictness, strictestRoute, type Route } from "../../src/route/index.js";

const unknown = ["deny", "allow", "", "ACCEPT", "constructor"] as unknown as Route[];

describe("routes", () => {
  it("rank accept < ask < defer < refuse, and the stricter of two known routes wins", () => {
    expect(ROUTES.map(routeStrictness)).toEqual([0, 1, 2, 3]);
    for (const a of ROUTES)
      for (const b of ROUTES) expect(strictestRoute(a, b)).toBe(ROUTES[Math.max(ROUTES.indexOf(a), ROUTES.indexOf(b))]);
  });

  it("rank a value that is no route above refuse, and make the stricter of it and any route refuse", () => {
    for (const value of unknown) {
      expect(isRoute(value)).toBe(false);
      expect(routeStrictness(value)).toBeGreaterThan(routeStrictness("refuse"));
      for (const route of ROUTES) {
        expect(strictestRoute(value, route)).toBe("refuse");
        expect(strictestRoute(route, value)).toBe("refuse");
      }
    }
  });
});
