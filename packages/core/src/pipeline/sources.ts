import type { ActionRequest } from "../request/index.js";
import type { SourceName, SourceVerdict } from "./types.js";
import {
  compilePolicy,
  createMemoryRateLimiter,
  evaluatePolicy,
  type CompiledPolicy,
  type RateLimiter,
} from "../evaluate/index.js";
import type { Policy } from "../policy/index.js";
import {
  createMemoryAttestationLedger,
  createMemoryProposalLedger,
  DEFAULT_CLOCK_SKEW_SECONDS,
  evaluateConsentGraphWithLedger,
  spendVerifiedAttestation,
  type ConsentGraph,
  type GraphContext,
  type GraphMapping,
} from "../graph/index.js";
import { evaluateActionContract } from "../contract/index.js";

/** One source of the pipeline. A source that does not judge a request returns null. */
export interface DecisionSource {
  readonly name: SourceName;
  /**
   * Judge after every source without `last` (its verdict keeps its place in `Decision.verdicts`), and be
   * handed their verdicts as `earlier`. The policy source does: a rule's rate limit is not spent on a call
   * another source refuses (text an agent read cannot use up the user's allowance).
   */
  readonly last?: boolean;
  evaluate(
    request: ActionRequest,
    now: Date,
    earlier?: readonly SourceVerdict[],
  ): SourceVerdict | null | Promise<SourceVerdict | null>;
}

function isCompiledPolicy(policy: Policy | CompiledPolicy): policy is CompiledPolicy {
  return "index" in policy && "policy" in policy;
}

/**
 * The YAML policy rules as a source (first match wins, then the rule's rate limit). Without a
 * rate limiter the source keeps its own in memory. It judges after the other sources, and a call one of
 * them refuses does not spend the matched rule's rate limit.
 */
export function policySource(
  policy: Policy | CompiledPolicy,
  options: { rateLimiter?: RateLimiter; spendRateLimits?: boolean } = {},
): DecisionSource {
  const compiled = isCompiledPolicy(policy) ? policy : compilePolicy(policy);
  const rateLimiter = options.rateLimiter ?? createMemoryRateLimiter();
  // false: rate limits are neither spent nor checked (judging a call already counted, such as a person's edit)
  const spend = options.spendRateLimits !== false;
  return {
    name: "policy",
    last: true,
    evaluate: (request, now, earlier = []) =>
      evaluatePolicy(compiled, request, {
        now,
        rateLimiter,
        spendRateLimit: spend && !earlier.some((v) => v.route === "refuse"),
      }),
  };
}

/** Options of the consent-graph source. */
export interface GraphSourceOptions {
  readonly graph: ConsentGraph;
  readonly mapping?: GraphMapping;
  /**
   * Everything the graph needs but the clock (threshold, reviews, trusted-channel keys, proposal ledger).
   * Without a proposal ledger the source keeps its own in memory: a cooling period counts from when this
   * source first saw the proposal. A ledger in a store (`@acp/store`) keeps it across restarts and nodes,
   * and may answer asynchronously (the source waits for it). Without an attestation ledger (`attestations`)
   * the source keeps its own in memory: a trusted-channel attestation is taken once by this source.
   */
  readonly context?: Omit<GraphContext, "now">;
}

/** The consent graph as a source; it judges only requests it can place (explicit target or mapping). */
export function graphSource(options: GraphSourceOptions): DecisionSource {
  // a trusted-channel attestation is single-use: spent here once the verdict is final (the graph may judge a
  // request twice, waiting for an asynchronous proposal ledger), so it is not in the context the graph sees
  const { attestations = createMemoryAttestationLedger(), ...given } = options.context ?? {};
  const context = {
    proposals: createMemoryProposalLedger(),
    ...(options.mapping !== undefined ? { reviewedMapping: options.mapping } : {}),
    ...given,
  };
  const skew = given.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  return {
    name: "graph",
    evaluate: (request, now) => {
      const verdict = evaluateConsentGraphWithLedger(options.graph, request, { ...context, now }, options.mapping);
      const spend = (judged: SourceVerdict | null) =>
        spendVerifiedAttestation(judged, request, attestations, skew, now);
      return verdict instanceof Promise ? verdict.then(spend) : spend(verdict);
    },
  };
}

/**
 * A request whose contract event names another tool than the request: the policy would judge one tool and
 * the contract another, and a runtime that runs the event's tool would run what no rule judged.
 */
function contractToolMismatch(request: ActionRequest): SourceVerdict | null {
  const event: unknown = request.contract;
  if (typeof event !== "object" || event === null) return null;
  const named: unknown = (event as { tool_name?: unknown }).tool_name;
  if (typeof named !== "string" || named === request.tool) return null;
  const message =
    `the contract event is about tool \`${named.slice(0, 256)}\` and the request about \`${request.tool}\`: ` +
    "one call has one tool, so the request is refused";
  return {
    source: "contract",
    route: "refuse",
    reasons: [{ source: "contract", code: "contract_tool_mismatch", message }],
  };
}

/**
 * The action contract as a source; it judges only requests that carry a contract event. An event whose
 * `tool_name` is not the request's `tool` is refused (`contract_tool_mismatch`).
 */
export function contractSource(): DecisionSource {
  return {
    name: "contract",
    evaluate: (request) =>
      request.contract === undefined
        ? null
        : (contractToolMismatch(request) ?? evaluateActionContract(request.contract)),
  };
}
