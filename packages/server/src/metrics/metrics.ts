/**
 * The service's counters in Prometheus text format: decisions by front end and route, consent
 * latency, pending requests and errors. Label values come from fixed sets, so the series stay bounded.
 */
import { ROUTES, type Route } from "@acp/core";

/** Where a decision came from. */
export type FrontEnd = "pre_tool_check" | "decide" | "mcp";

const FRONT_ENDS: readonly FrontEnd[] = ["pre_tool_check", "decide", "mcp"];

/** Upper bounds of the consent-latency histogram, in seconds. */
export const CONSENT_LATENCY_BUCKETS = [0.5, 1, 5, 15, 30, 60, 120, 300, 600] as const;

/** How a consent request ended, as counted. */
export type ConsentOutcomeLabel = "approved" | "denied" | "expired" | "withdrawn";

/** The service's metrics. */
export interface ServerMetrics {
  countDecision(frontEnd: FrontEnd, route: Route): void;
  observeConsent(outcome: ConsentOutcomeLabel, seconds: number): void;
  /** Counts an error answer by its status class and code. */
  countError(status: number, code: string): void;
  /** Renders the text exposition; `pending` is read at scrape time. */
  render(pending: number): string;
}

const MAX_ERROR_SERIES = 64;

/** Creates an empty set of metrics. */
export function createMetrics(): ServerMetrics {
  // one counter object per front end, keyed by route: no key string built per decision
  const decisions = new Map<FrontEnd, Record<string, number>>();
  for (const f of FRONT_ENDS) decisions.set(f, Object.fromEntries(ROUTES.map((r) => [r, 0])));
  const buckets = new Map<ConsentOutcomeLabel, number[]>();
  const sums = new Map<ConsentOutcomeLabel, number>();
  const errors = new Map<string, number>();
  return {
    countDecision(frontEnd, route) {
      const counts = decisions.get(frontEnd);
      if (counts !== undefined) counts[route] = (counts[route] ?? 0) + 1;
    },
    observeConsent(outcome, seconds) {
      const counts = buckets.get(outcome) ?? new Array<number>(CONSENT_LATENCY_BUCKETS.length + 1).fill(0);
      const index = CONSENT_LATENCY_BUCKETS.findIndex((b) => seconds <= b);
      const slot = index === -1 ? CONSENT_LATENCY_BUCKETS.length : index;
      counts[slot] = (counts[slot] ?? 0) + 1;
      buckets.set(outcome, counts);
      sums.set(outcome, (sums.get(outcome) ?? 0) + seconds);
    },
    countError(status, code) {
      const key = `${status}|${code}`;
      if (!errors.has(key) && errors.size >= MAX_ERROR_SERIES) return;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    },
    render(pending) {
      const lines: string[] = [
        "# HELP acp_decisions_total Decisions made, by front end and route.",
        "# TYPE acp_decisions_total counter",
      ];
      for (const [frontEnd, counts] of decisions) {
        for (const route of ROUTES) {
          lines.push(`acp_decisions_total{front_end="${frontEnd}",route="${route}"} ${counts[route] ?? 0}`);
        }
      }
      lines.push(
        "# HELP acp_consent_latency_seconds Time from a consent request to its outcome.",
        "# TYPE acp_consent_latency_seconds histogram",
      );
      for (const [outcome, counts] of buckets) {
        let cumulative = 0;
        CONSENT_LATENCY_BUCKETS.forEach((le, i) => {
          cumulative += counts[i] ?? 0;
          lines.push(`acp_consent_latency_seconds_bucket{outcome="${outcome}",le="${le}"} ${cumulative}`);
        });
        cumulative += counts[CONSENT_LATENCY_BUCKETS.length] ?? 0;
        lines.push(`acp_consent_latency_seconds_bucket{outcome="${outcome}",le="+Inf"} ${cumulative}`);
        lines.push(`acp_consent_latency_seconds_sum{outcome="${outcome}"} ${sums.get(outcome) ?? 0}`);
        lines.push(`acp_consent_latency_seconds_count{outcome="${outcome}"} ${cumulative}`);
      }
      lines.push(
        "# HELP acp_consent_pending Consent requests waiting for a person.",
        "# TYPE acp_consent_pending gauge",
        `acp_consent_pending ${pending}`,
        "# HELP acp_http_errors_total Error answers, by status and code.",
        "# TYPE acp_http_errors_total counter",
      );
      for (const [key, n] of errors) {
        const [status, code] = key.split("|");
        lines.push(`acp_http_errors_total{status="${status}",code="${code}"} ${n}`);
      }
      return `${lines.join("\n")}\n`;
    },
  };
}
