/**
 * The consent graph as a pipeline source: a graph outcome becomes a route with reasons.
 * AUTONOMOUS → accept; VISIBLE → accept with a `visible_notify` reason; FORCED → ask; FORCED while a
 * cooling period runs → refuse until it ends (the time is kept: `retryAtOf`); BLOCKED → refuse. Null when
 * the graph does not judge the request.
 */
import { noteRetryAt } from "../evaluate/retry-after.js";
import type { SourceVerdict, Reason } from "../pipeline/types.js";
import type { ActionRequest, GraphTarget } from "../request/index.js";
import type { Route } from "../route/index.js";
import { routeStrictness } from "../route/index.js";
import { checkConsentGraph } from "./check.js";
import { mapToGraphTarget, type GraphMapping } from "./mapping.js";
import type { ProposalLedger } from "./proposal-ledger.js";
import type { ConsentGraph, GraphContext, GraphOutcome } from "./types.js";

/**
 * The route a graph outcome maps to. A proposal in its cooling period is refused, not asked: the period is
 * mandatory ("cannot be implemented immediately"), and a person asked now could approve it at once.
 */
export function graphOutcomeRoute(outcome: GraphOutcome): Route {
  switch (outcome.outcome) {
    case "AUTONOMOUS":
    case "VISIBLE":
      return "accept";
    case "FORCED":
      return outcome.deferred_until !== undefined ? "refuse" : "ask";
    default:
      return "refuse";
  }
}

function verdictOf(outcome: GraphOutcome): SourceVerdict {
  const rule = `${outcome.domain}.${outcome.action}`;
  const reasons: Reason[] = outcome.reasons.map((r) => ({ source: "graph", code: r.code, message: r.message, rule }));
  return { source: "graph", route: graphOutcomeRoute(outcome), reasons, rule };
}

/** Keeps when a cooling period's refusal lifts (`deferred_until`), for a front end's `Retry-After`. */
function withRetryAt(verdict: SourceVerdict, ...outcomes: GraphOutcome[]): SourceVerdict {
  if (verdict.route !== "refuse") return verdict;
  const refusing = outcomes.filter((o) => graphOutcomeRoute(o) === "refuse");
  // a refusal for good (BLOCKED) beside it: waiting changes nothing, so no time is told
  if (refusing.some((o) => o.deferred_until === undefined)) return verdict;
  const times = refusing.map((o) => Date.parse(o.deferred_until ?? ""));
  return times.length > 0 ? noteRetryAt(verdict, Math.max(...times)) : verdict;
}

function refusal(code: string, message: string): SourceVerdict {
  return { source: "graph", route: "refuse", reasons: [{ source: "graph", code, message }] };
}

function mappedTarget(
  mapping: GraphMapping | undefined,
  request: ActionRequest,
  graph: ConsentGraph,
): GraphTarget | null {
  if (mapping === undefined || request.graph === undefined) return null;
  const { graph: _explicit, ...call } = request;
  void _explicit;
  return mapToGraphTarget(mapping, call, graph);
}

/**
 * Judges a request by the consent graph. The target is the request's own `graph` or the mapping's; when
 * the request names a target AND the mapping covers the call differently, both are checked and the
 * stricter verdict wins. The tool call is bound into trusted-channel attestations. Never throws: an error
 * is a refusal.
 */
export function evaluateConsentGraph(
  graph: ConsentGraph,
  request: ActionRequest,
  context: GraphContext,
  mapping?: GraphMapping,
): SourceVerdict | null {
  try {
    const target = mapToGraphTarget(mapping, request, graph);
    if (target === null) return null;
    const call = {
      tool: request.tool,
      arguments: request.arguments,
      ...(request.server !== undefined ? { server: request.server } : {}),
    };
    const outcome = checkConsentGraph(graph, { ...target, call }, context);
    const verdict = verdictOf(outcome);
    const mapped = mappedTarget(mapping, request, graph);
    if (mapped === null || (mapped.domain === target.domain && mapped.action === target.action)) {
      return withRetryAt(verdict, outcome);
    }
    const secondOutcome = checkConsentGraph(
      graph,
      { ...target, domain: mapped.domain, action: mapped.action, call },
      context,
    );
    const second = verdictOf(secondOutcome);
    const [strict, other] =
      routeStrictness(second.route) > routeStrictness(verdict.route) ? [second, verdict] : [verdict, second];
    return withRetryAt({ ...strict, reasons: [...strict.reasons, ...other.reasons] }, outcome, secondOutcome);
  } catch (err) {
    const message = `the consent graph could not judge the request, so it is refused: ${err instanceof Error ? err.message : String(err)}`;
    return refusal("graph_error", message);
  }
}

/**
 * `evaluateConsentGraph` with a proposal ledger that may answer asynchronously (a store): the request is
 * judged once with each asynchronous first sight taken as `now`, the ledger's answers are awaited, and the
 * request is judged again with them. A ledger that answers synchronously is judged synchronously. Only the
 * judging whose answer stands spends a trusted-channel attestation (`context.attestations`). A ledger that
 * fails is a refusal (`graph_error`).
 */
export function evaluateConsentGraphWithLedger(
  graph: ConsentGraph,
  request: ActionRequest,
  context: GraphContext,
  mapping?: GraphMapping,
): SourceVerdict | null | Promise<SourceVerdict | null> {
  const ledger = context.proposals;
  if (ledger === undefined) return evaluateConsentGraph(graph, request, context, mapping);
  const waiting = new Map<string, Promise<Date>>();
  const probe: ProposalLedger = {
    firstSeen(key, now, sighting) {
      const answer = ledger.firstSeen(key, now, sighting);
      if (!(answer instanceof Promise)) return answer;
      answer.catch(() => undefined); // awaited below
      waiting.set(key, answer);
      return now;
    },
  };
  // the first judging spends no trusted-channel attestation (each is good for one request): the judging
  // whose answer stands spends it
  const dry = context.attestations !== undefined ? { attestations: { use: () => true } } : {};
  const provisional = evaluateConsentGraph(graph, request, { ...context, ...dry, proposals: probe }, mapping);
  if (waiting.size === 0) {
    return context.attestations === undefined ? provisional : evaluateConsentGraph(graph, request, context, mapping);
  }
  return (async () => {
    const seen = new Map<string, Date>();
    try {
      for (const [key, answer] of waiting) seen.set(key, await answer);
    } catch (err) {
      const message = `the consent graph could not read when ACP first saw the proposal, so it is refused: ${err instanceof Error ? err.message : String(err)}`;
      return refusal("graph_error", message);
    }
    // the same request asks for the same keys; one not asked before counts from now (stricter)
    const settled: ProposalLedger = { firstSeen: (key, now) => seen.get(key) ?? now };
    return evaluateConsentGraph(graph, request, { ...context, proposals: settled }, mapping);
  })();
}
