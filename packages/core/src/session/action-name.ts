import { compileGlob, isWorkBudgetOpen, measureWork, spendWork, type GlobMatcher } from "../glob/index.js";
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
  const first = (names: readonly string[]): string | undefined => {
    for (const [pattern, matcher] of matchers) if (names.some((n) => matcher(n))) return pattern;
    return undefined;
  };
  // an empty list (no forbidden or confirmed actions) answers nothing: no look-up needed
  const match = matchers.length === 0 ? () => undefined : rememberedMatch(first);
  return { ok: true, value: { patterns, match } };
}

/** Most answers one compiled list keeps (the names of the actions a session calls; past it, they start over). */
const MAX_KEPT_MATCHES = 256;

/** An answer of a compiled list for some names, and the work units matching them drew. */
interface KeptMatch {
  readonly pattern: string | undefined;
  readonly units: number;
}

/**
 * `first`, answering names it answered before from what it kept: a session matches the same few action names
 * against its intent on every call. Matching is a pure function of the names, and what it drew of the work budget
 * is drawn again, at once; inside an open budget (where drawing at once could stop elsewhere) it always matches.
 */
function rememberedMatch(first: (names: readonly string[]) => string | undefined): ActionPatterns["match"] {
  // one name (the usual case) is kept by itself; more by their JSON, in a map of their own
  const single = new Map<string, KeptMatch>();
  const several = new Map<string, KeptMatch>();
  return (names) => {
    if (isWorkBudgetOpen()) return first(names);
    const kept = names.length === 1 ? single : several;
    const key = names.length === 1 ? (names[0] as string) : JSON.stringify(names);
    const known = kept.get(key);
    if (known !== undefined) {
      if (known.units > 0) spendWork(known.units);
      return known.pattern;
    }
    let units = 0;
    const pattern = measureWork(
      () => first(names),
      (spent) => (units = spent),
    );
    if (kept.size >= MAX_KEPT_MATCHES) kept.clear();
    kept.set(key, { pattern, units });
    return pattern;
  };
}
