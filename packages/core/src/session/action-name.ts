import { compileGlob, type GlobMatcher } from "../glob/index.js";
import type { Issue, Result } from "../issues/index.js";
import type { ActionRequest } from "../request/index.js";

/**
 * The names an action answers to in intents, plans, budgets and transition rules: `server.tool` (just `tool`
 * when the request names no server) and, when the request carries consent-graph coordinates,
 * `domain.action`. A pattern matches an action when it matches any of its names.
 */
export function actionNamesOf(request: Pick<ActionRequest, "tool" | "server" | "graph">): readonly string[] {
  const names = [request.server === undefined ? request.tool : `${request.server}.${request.tool}`];
  const graph = request.graph;
  if (graph !== undefined && typeof graph.domain === "string" && typeof graph.action === "string") {
    names.push(`${graph.domain}.${graph.action}`);
  }
  return names;
}

/** The primary name of an action (`server.tool`, or `tool` without a server). */
export function primaryActionName(request: Pick<ActionRequest, "tool" | "server">): string {
  return request.server === undefined ? request.tool : `${request.server}.${request.tool}`;
}

/** A compiled list of action globs. */
export interface ActionPatterns {
  readonly patterns: readonly string[];
  /** The first pattern matching any of the names, or undefined. */
  match(names: readonly string[]): string | undefined;
}

/** Compiles action globs (picomatch semantics, `.` is an ordinary character); bad globs are issues. */
export function compileActionPatterns(
  patterns: readonly string[],
  path: readonly (string | number)[],
): Result<ActionPatterns> {
  const issues: Issue[] = [];
  const matchers: [string, GlobMatcher][] = [];
  patterns.forEach((pattern, i) => {
    const compiled = compileGlob(pattern);
    if (compiled.ok) matchers.push([pattern, compiled.value]);
    else {
      const reason = compiled.issues.map((x) => x.message).join("; ");
      issues.push({
        code: "invalid_action_pattern",
        path: [...path, i],
        message: `${path.join(".")}[${i}]: ${reason}`,
      });
    }
  });
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: {
      patterns,
      match(names) {
        for (const [pattern, matcher] of matchers) if (names.some((n) => matcher(n))) return pattern;
        return undefined;
      },
    },
  };
}
