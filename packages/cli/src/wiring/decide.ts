import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  compilePolicy,
  contractSource,
  type ActionRequest,
  createMemoryRateLimiter,
  createPipeline,
  formatIssue,
  graphSource,
  parseConsentGraph,
  parsePolicy,
  policySource,
  type DecisionSource,
  type ClassificationOverride,
  type ConsentGraph,
  type Policy,
} from "@acp/core";
import type { ProxySessionRuntime } from "./session-runtime.js";
import { STARTER_POLICY, createSqliteRateLimiter } from "@acp/store";
import { graphReviews, graphSourceOptions, type GraphConfig } from "../decision/graph-config.js";
import type { Decide } from "@acp/proxy";
import { CliError, EXIT } from "../exit-codes.js";
import { readInputFileSync } from "../decision/read-input.js";
import type { HomeState } from "./home-state.js";

/** Options of the proxy's decision function. */
export interface PipelineDecideOptions {
  readonly state: HomeState;
  /** The policy file; when it is the home's default and missing, the built-in starter policy is used. */
  readonly policyPath: string;
  readonly policyIsDefault: boolean;
  /**
   * The `graph:` section of the config file in use (`--config FILE`, else `$ACP_HOME/config.yml`), already
   * checked: the mapping and threshold for the home's consent graph. The graph and its reviews stay the home's.
   */
  readonly graph: GraphConfig;
  readonly now: () => Date;
  readonly log: (line: string) => void;
  /** The session runtime: one per downstream session, judging every call as the `session` source. */
  readonly sessions?: (classify: readonly ClassificationOverride[]) => ProxySessionRuntime;
}

function loadPolicy(options: PipelineDecideOptions): Policy {
  if (!existsSync(options.policyPath)) {
    if (!options.policyIsDefault) throw new CliError(`policy \`${options.policyPath}\` does not exist`, EXIT.error);
    options.log(
      `no policy at ${options.policyPath}: using the built-in starter policy (run \`acp init\` to write one)`,
    );
    const starter = parsePolicy(STARTER_POLICY, { file: "<starter policy>" });
    if (!starter.ok) throw new CliError("the built-in starter policy does not validate", EXIT.error);
    return starter.value;
  }
  const parsed = parsePolicy(readInputFileSync(options.policyPath, "policy"), { file: options.policyPath });
  if (!parsed.ok) {
    const lines = parsed.issues.map((i) => formatIssue(i, options.policyPath)).join("\n");
    throw new CliError(`invalid policy:\n${lines}`, EXIT.invalid);
  }
  return parsed.value;
}

/**
 * The home's consent graph (`$ACP_HOME/consent-graph.json`), validated; null when there is none. Invalid →
 * exit 4 with every problem (what `acp doctor` reports too).
 */
export function readHomeConsentGraph(home: string): ConsentGraph | null {
  const file = join(home, "consent-graph.json");
  if (!existsSync(file)) return null;
  const graph = parseConsentGraph(readInputFileSync(file, "consent graph"), { file });
  if (!graph.ok) {
    const lines = graph.issues.map((i) => formatIssue(i, file)).join("\n");
    throw new CliError(`invalid consent graph:\n${lines}`, EXIT.invalid);
  }
  return graph.value;
}

function graphSourceOf(options: PipelineDecideOptions): DecisionSource | null {
  const graph = readHomeConsentGraph(options.state.home);
  if (graph === null) return null;
  const settings = { ...graphReviews(options.state.home), ...options.graph };
  return graphSource({ graph, ...graphSourceOptions(settings) });
}

/**
 * The proxy's `Decide`: the one pipeline over the policy, the home's consent graph (when present, with
 * `graph`'s mapping and threshold) and the action contract, with rate limits kept in `state.db` (or memory without a home). Never throws.
 * `recheckEdits` judges arguments a person edited: the same policy, graph and contract, spending no rate
 * limit (the call was counted when it was asked) and without the session (the edit is the person's).
 */
export function createPipelineDecide(options: PipelineDecideOptions): Decide & { readonly recheckEdits: Decide } {
  const policy = loadPolicy(options);
  const compiled = compilePolicy(policy);
  const db = options.state.db();
  const rateLimiter = db === null ? createMemoryRateLimiter() : createSqliteRateLimiter(db);
  const graph = graphSourceOf(options);
  const rest: DecisionSource[] = graph !== null ? [graph, contractSource()] : [contractSource()];
  const sources: DecisionSource[] = [policySource(compiled, { rateLimiter }), ...rest];
  const pipeline = createPipeline(sources, { classify: policy.classify });
  const recheck = createPipeline([policySource(compiled, { spendRateLimits: false }), ...rest], {
    classify: policy.classify,
  });
  const recheckEdits: Decide = (request) => recheck.decide(request, options.now());
  const runtime = options.sessions?.(policy.classify);
  if (runtime === undefined) {
    return Object.assign((request: ActionRequest) => pipeline.decide(request, options.now()), { recheckEdits });
  }
  const decide: Decide = (request, context) => {
    if (context === undefined) return pipeline.decide(request, options.now());
    const withSession = createPipeline([...sources, runtime.sourceFor(context.sessionId, context.tokenAgent)], {
      classify: policy.classify,
    });
    return withSession.decide(request, options.now());
  };
  return Object.assign(decide, { recheckEdits });
}
