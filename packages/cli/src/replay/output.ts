import { ROUTES, type Route } from "@acp/core";
import type { ReplayedCall } from "./driver.js";

/** Totals over a replay: traces, calls and calls per route. */
export interface ReplaySummary {
  readonly traces: number;
  readonly calls: number;
  readonly routes: Readonly<Record<Route, number>>;
}

/** Counts the routes of replayed calls. */
export function summarizeReplay(traces: number, calls: readonly ReplayedCall[]): ReplaySummary {
  const routes = Object.fromEntries(ROUTES.map((r) => [r, 0])) as Record<Route, number>;
  for (const call of calls) routes[call.route] += 1;
  return { traces, calls: calls.length, routes };
}

/** One output line per call: `{"trace","index","server","tool","route","reasons"}` (stable; documented). */
export function formatReplayedCall(call: ReplayedCall): string {
  return JSON.stringify({
    trace: call.trace,
    index: call.index,
    server: call.server,
    tool: call.tool,
    route: call.route,
    reasons: call.reasons,
  });
}

/** The summary line: JSON (`{"summary":{…}}`) or words for a person. */
export function formatReplaySummary(summary: ReplaySummary, json: boolean): string {
  if (json) return JSON.stringify({ summary });
  const routes = ROUTES.map((r) => `${summary.routes[r]} ${r}`).join(", ");
  const traces = `${summary.traces} trace${summary.traces === 1 ? "" : "s"}`;
  const calls = `${summary.calls} call${summary.calls === 1 ? "" : "s"}`;
  return `replayed ${traces}, ${calls}: ${routes}`;
}
