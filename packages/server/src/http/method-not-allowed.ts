/**
 * 405 for a path of the API asked with a method it does not take (`GET /pre-tool-check`, `PUT /v1/decide`):
 * the error body with `method_not_allowed` and an `Allow` header naming the methods it takes, where the
 * path would otherwise answer 404 as if it did not exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { ServerMetrics } from "../metrics/metrics.js";
import { errorBody } from "./error-body.js";

/** The methods a path is answered 405 on when it does not take them (HEAD comes with GET). */
const ANSWERED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/** What is known of one path: the methods of its documented routes, and every method registered on it. */
interface PathMethods {
  readonly documented: Set<string>;
  readonly registered: Set<string>;
}

/** Collects the routes as they are registered; `answer` then adds the 405 routes. */
export interface WrongMethodAnswers {
  /** Adds a hidden 405 route for each method a documented path does not take. Call once, after every route. */
  answer(): void;
}

const methodsOf = (route: RouteOptions): string[] =>
  (Array.isArray(route.method) ? route.method : [route.method]).map((m) => String(m).toUpperCase());

const isHidden = (route: RouteOptions): boolean => (route.schema as { hide?: unknown } | undefined)?.hide === true;

/**
 * Starts collecting routes; install before the routes are registered. The paths answered are those the
 * OpenAPI document lists (routes not hidden: the API, health and metrics, `/mcp`); the console, the docs UI
 * and `/openapi.json` are left as they are. The 405 routes are hidden from the document, and answer in
 * `onRequest`, before any body is read or a token checked: the method is wrong whoever asks, as a path that
 * does not exist is (404) for everyone.
 */
export function collectWrongMethods(app: FastifyInstance, metrics: ServerMetrics): WrongMethodAnswers {
  const paths = new Map<string, PathMethods>();
  let collecting = true;
  app.addHook("onRoute", (route) => {
    if (!collecting) return;
    const known = paths.get(route.url) ?? { documented: new Set<string>(), registered: new Set<string>() };
    paths.set(route.url, known);
    for (const method of methodsOf(route)) {
      known.registered.add(method);
      if (!isHidden(route)) known.documented.add(method);
    }
  });
  return {
    answer() {
      collecting = false;
      for (const [url, { documented, registered }] of paths) {
        if (documented.size === 0) continue;
        const allow = [...documented].sort().join(", ");
        const missing = ANSWERED_METHODS.filter((m) => !registered.has(m));
        if (missing.length === 0) continue;
        // answered in the hook (done is not called): the body is never read, no guard runs
        const onRequest = (request: FastifyRequest, reply: FastifyReply): void => {
          metrics.countError(405, "method_not_allowed");
          const path = request.url.split("?")[0]?.slice(0, 200) ?? "";
          const message = `no route \`${request.method} ${path}\`: that path takes ${allow}`;
          void reply.status(405).header("allow", allow).send(errorBody("method_not_allowed", message));
        };
        app.route({ method: missing, url, schema: { hide: true }, onRequest, handler: () => undefined });
      }
    },
  };
}
